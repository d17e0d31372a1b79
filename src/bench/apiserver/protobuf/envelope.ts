// The protobuf envelope of kube-apiserver: `k8s\0` + runtime.Unknown around an object, and which message each apiVersion/kind is.
import protobuf from 'protobufjs/minimal.js';
import type { Json } from '../patch/merge-patch.js';
import { decodeMessage, encodeMessage, ProtobufError } from './codec.js';
import { KIND_MESSAGES } from './schema.gen.js';

export const PROTOBUF_TYPE = 'application/vnd.kubernetes.protobuf';

/** The magic number before every enveloped object ("k8s" and a zero byte). */
export const ENVELOPE_PREFIX = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

const META = 'k8s.io.apimachinery.pkg.apis.meta.v1';

/** Kinds that are not resources but travel in protobuf bodies. */
const OTHER_MESSAGES: Record<string, string> = {
  'v1/Status': `${META}.Status`,
  'meta.k8s.io/v1/Status': `${META}.Status`,
  'autoscaling/v1/Scale': 'k8s.io.api.autoscaling.v1.Scale',
};

/** The message of an apiVersion and kind (a kind's List included), or undefined: not served as protobuf (custom resources, Tables). */
export function messageFor(apiVersion: string, kind: string): string | undefined {
  // DeleteOptions is registered in every group version: a client sends it under the resource's own.
  if (kind === 'DeleteOptions') return `${META}.DeleteOptions`;
  const key = `${apiVersion}/${kind}`;
  const direct = KIND_MESSAGES[key] ?? OTHER_MESSAGES[key];
  if (direct !== undefined) return direct;
  if (kind.endsWith('List')) {
    const item = KIND_MESSAGES[`${apiVersion}/${kind.slice(0, -4)}`];
    if (item !== undefined) return `${item}List`;
  }
  return undefined;
}

function typeOf(o: Json): { apiVersion: string; kind: string } {
  if (o === null || typeof o !== 'object' || Array.isArray(o) || typeof o.apiVersion !== 'string' || typeof o.kind !== 'string') {
    throw new ProtobufError('the object has no apiVersion and kind');
  }
  return { apiVersion: o.apiVersion, kind: o.kind };
}

/** Whether this JSON body has a protobuf form. */
export function hasProtobuf(o: Json): boolean {
  try {
    const t = typeOf(o);
    return messageFor(t.apiVersion, t.kind) !== undefined;
  } catch {
    return false;
  }
}

/** `k8s\0` + Unknown{typeMeta{apiVersion, kind}, raw = the object's message}, contentEncoding and contentType empty, as upstream writes them. */
export function encodeObject(o: Json): Buffer {
  const { apiVersion, kind } = typeOf(o);
  const type = messageFor(apiVersion, kind);
  if (type === undefined) throw new ProtobufError(`${apiVersion} ${kind} has no protobuf form`);
  const raw = encodeMessage(type, o);
  // Unknown{1: TypeMeta{1: apiVersion, 2: kind}, 2: raw, 3: contentEncoding, 4: contentType}, every field written as the Go marshaller does.
  const w = protobuf.Writer.create();
  w.uint32((1 << 3) | 2).fork().uint32((1 << 3) | 2).string(apiVersion).uint32((2 << 3) | 2).string(kind).ldelim();
  w.uint32((2 << 3) | 2).bytes(raw);
  w.uint32((3 << 3) | 2).string('');
  w.uint32((4 << 3) | 2).string('');
  return Buffer.concat([ENVELOPE_PREFIX, w.finish()]);
}

/** An enveloped object back to JSON, apiVersion and kind taken from the envelope. */
export function decodeObject(body: Uint8Array): Json {
  try {
    return decodeEnveloped(Buffer.from(body));
  } catch (err) {
    if (err instanceof ProtobufError) throw err;
    // The reader's own errors (a length past the end, a bad wire type): the body is not a protobuf message.
    throw new ProtobufError(`malformed protobuf: ${err instanceof Error ? err.message : String(err)}`);
  }
}

function decodeEnveloped(b: Buffer): Json {
  if (b.length < 4 || !b.subarray(0, 4).equals(ENVELOPE_PREFIX)) throw new ProtobufError('the protobuf body does not start with the "k8s\\x00" envelope prefix');
  // Unknown is read field by field: decodeMessage would drop its empty strings, which is fine, but raw must stay bytes.
  const r = protobuf.Reader.create(b.subarray(4));
  let apiVersion = '';
  let kind = '';
  let raw: Uint8Array = new Uint8Array();
  let contentEncoding = '';
  while (r.pos < r.len) {
    const tag = r.uint32();
    switch (tag >>> 3) {
      case 1: {
        const tm = decodeMessage('k8s.io.apimachinery.pkg.runtime.TypeMeta', r.bytes()) as { apiVersion?: string; kind?: string };
        apiVersion = tm.apiVersion ?? '';
        kind = tm.kind ?? '';
        break;
      }
      case 2: raw = r.bytes(); break;
      case 3: contentEncoding = r.string(); break;
      default: r.skipType(tag & 7);
    }
  }
  if (contentEncoding !== '') throw new ProtobufError(`content encoding ${JSON.stringify(contentEncoding)} is not supported`);
  const type = messageFor(apiVersion, kind);
  if (type === undefined) throw new ProtobufError(`${apiVersion || '(no apiVersion)'} ${kind || '(no kind)'} has no protobuf form here`);
  const obj = decodeMessage(type, raw) as Record<string, Json>;
  return { apiVersion, kind, ...obj };
}
