// Bytes straight onto the wire: a gRPC client with an identity serializer sends requests that are not valid protobuf.
import * as grpc from '@grpc/grpc-js';
import { toGrpcTarget } from '../../src/csi/client.js';
import { csiPackage } from '../../src/csi/proto.js';
import type { FuzzRandom } from './fuzz-random.js';

/** '/csi.v1.Node/NodeStageVolume' and the rest, read from the service definitions (so none is forgotten). */
export function methodPaths(): Map<string, string> {
  const pkg = csiPackage().csi.v1;
  const out = new Map<string, string>();
  for (const svc of [pkg.Identity.service, pkg.Controller.service, pkg.Node.service]) {
    for (const [name, def] of Object.entries(svc)) out.set(name, def.path);
  }
  return out;
}

const identity = (b: Buffer): Buffer => b;

export interface RawOutcome {
  code: grpc.status;
  details: string;
}

/** One channel for raw calls, apart from the typed client's, so a poisoned connection is seen as such. */
export class RawWire {
  private readonly client: grpc.Client;

  constructor(endpoint: string) {
    this.client = new grpc.Client(toGrpcTarget(endpoint), grpc.credentials.createInsecure());
  }

  close(): void { this.client.close(); }

  send(methodPath: string, payload: Buffer, timeoutMs: number): Promise<RawOutcome> {
    return new Promise((resolve) => {
      this.client.makeUnaryRequest<Buffer, Buffer>(methodPath, identity, identity, payload, new grpc.Metadata(), { deadline: new Date(Date.now() + timeoutMs) },
        (err) => resolve(err ? { code: err.code, details: err.details } : { code: grpc.status.OK, details: '' }));
    });
  }
}

function varint(n: bigint): Buffer {
  const out: number[] = [];
  let v = BigInt.asUintN(64, n);
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v !== 0n) byte |= 0x80;
    out.push(byte);
  } while (v !== 0n);
  return Buffer.from(out);
}

const tag = (field: number, wire: number) => varint(BigInt((field << 3) | wire));
const lengthDelimited = (field: number, body: Buffer) => Buffer.concat([tag(field, 2), varint(BigInt(body.length)), body]);

/** Bytes that are not UTF-8: lone continuation bytes, overlong forms, surrogates, truncated sequences. */
const NOT_UTF8 = [[0xff], [0xfe, 0xff], [0x80], [0xc0, 0xaf], [0xe0, 0x80, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xe2, 0x82], [0x61, 0x00, 0xc3]];

/**
 * A payload for one method: garbage, broken framing (lengths past the end, varints of 11
 * bytes, wire types 6 and 7, field 0, unbalanced groups), invalid UTF-8 in string fields,
 * out-of-range enums and nested messages inside strings.
 */
export function rawPayload(rng: FuzzRandom): Buffer {
  const field = rng.pick([1, 2, 3, 4, 5, 6, 7, 8, 15, 16, 536870911]);
  return rng.weighted<() => Buffer>([
    [3, () => rng.bytes(rng.length(4096) + 1)],
    [2, () => Buffer.concat([tag(field, 2), varint(BigInt(rng.between(10, 1 << 30))), rng.bytes(rng.between(0, 8))])],
    [1, () => Buffer.concat([tag(field, 0), Buffer.alloc(11, 0xff)])],
    [1, () => Buffer.concat([tag(field, rng.pick([6, 7])), rng.bytes(4)])],
    [1, () => Buffer.concat([Buffer.from([0x00]), rng.bytes(3)])],
    [1, () => Buffer.concat([tag(field, 3), tag(field, 3), tag(field + 1, 4)])],
    [1, () => Buffer.concat([tag(field, 4)])],
    [3, () => lengthDelimited(rng.pick([1, 2, 3, 4]), Buffer.from(rng.pick(NOT_UTF8)))],
    [2, () => Buffer.concat([lengthDelimited(1, Buffer.from('lv-0000')), lengthDelimited(rng.pick([2, 3, 4, 6]), Buffer.from(rng.pick(NOT_UTF8)))])],
    // A capability (CreateVolume field 3, stage field 4, publish field 5) with an enum far out of range.
    [2, () => lengthDelimited(rng.pick([3, 4, 5]), lengthDelimited(3, Buffer.concat([tag(1, 0), varint(BigInt(rng.pick([8, 99, 2147483647, -1])))])))],
    // A map entry whose key is a nested message and whose value is missing.
    [1, () => lengthDelimited(rng.pick([2, 4, 5, 6]), lengthDelimited(1, lengthDelimited(1, rng.bytes(6))))],
    [1, () => Buffer.concat([lengthDelimited(1, Buffer.from('ok')), rng.bytes(rng.between(1, 64))])],
    [1, () => Buffer.alloc(0)],
  ])();
}
