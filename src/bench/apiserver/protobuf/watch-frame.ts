// A protobuf watch stream as kube-apiserver writes it: length-framed WatchEvents whose objects are enveloped.
import protobuf from 'protobufjs/minimal.js';
import type { Json } from '../patch/merge-patch.js';
import { decodeObject, encodeObject } from './envelope.js';
import { ProtobufError } from './protobuf-error.js';

/** The Content-Type of a protobuf watch (upstream's stream serializer). */
export const PROTOBUF_WATCH_TYPE = 'application/vnd.kubernetes.protobuf;stream=watch';

/**
 * One frame of a protobuf watch: a 4-byte big-endian length, then a WatchEvent message
 * (not enveloped: the stream serializer writes it raw) whose object is the enveloped object.
 */
export function watchFrame(type: string, object: Json): Buffer {
  // RawExtension's JSON form is the embedded object; here its raw bytes are the enveloped object, so the frame is written by hand.
  const w = protobuf.Writer.create();
  w.uint32((1 << 3) | 2).string(type);
  w.uint32((2 << 3) | 2).fork().uint32((1 << 3) | 2).bytes(encodeObject(object)).ldelim();
  const msg = w.finish();
  const head = Buffer.alloc(4);
  head.writeUInt32BE(msg.length, 0);
  return Buffer.concat([head, msg]);
}

/** Reads the frames of a protobuf watch body (tests, clients): each as {type, object}. */
export function readWatchFrames(body: Buffer): { type: string; object: Json }[] {
  const out: { type: string; object: Json }[] = [];
  let pos = 0;
  while (pos + 4 <= body.length) {
    const len = body.readUInt32BE(pos);
    const msg = body.subarray(pos + 4, pos + 4 + len);
    if (msg.length < len) throw new ProtobufError('a watch frame is cut short');
    pos += 4 + len;
    const r = protobuf.Reader.create(msg);
    let type = '';
    let inner: Uint8Array = new Uint8Array();
    while (r.pos < r.len) {
      const tag = r.uint32();
      if (tag >>> 3 === 1) type = r.string();
      else if (tag >>> 3 === 2) {
        const rr = protobuf.Reader.create(r.bytes());
        while (rr.pos < rr.len) {
          const t = rr.uint32();
          if (t >>> 3 === 1) inner = rr.bytes();
          else rr.skipType(t & 7);
        }
      } else r.skipType(tag & 7);
    }
    out.push({ type, object: decodeObject(inner) });
  }
  return out;
}
