// Lode's CSI protobuf contract: the gRPC service definitions over the codec compiled at build time, and the contract's schema.
import * as grpc from '@grpc/grpc-js';
import type { ProtoGrpcType } from '../gen/csi.js';
import { csi as codecs, type CsiConversion, type CsiMessageCodec } from '../gen/csi-codec.js';
import { CSI_SCHEMA, type SchemaNode } from '../gen/csi-schema.js';

export type { SchemaField, SchemaNode } from '../gen/csi-schema.js';

/** The package the contract's messages and services are in. */
export const CSI_PACKAGE = 'csi.v1';

/**
 * How a decoded message reads, for server and clients alike. int64 fields travel as decimal
 * strings so sizes above 2^53 are never silently rounded; `defaults` fills omitted fields so
 * a missing message reads as null and a missing string as "", which validation relies on.
 */
export const CSI_CONVERSION: CsiConversion = { longs: String, enums: String, defaults: true, oneofs: true };

/** A method of the contract, as grpc-js serves and calls it, with the names of its message types. */
export interface CsiMethodDefinition extends grpc.MethodDefinition<object, object> {
  /** The request's message name within the package (as the schema writes it: "CreateVolumeRequest"). */
  requestType: string;
  responseType: string;
}

/** One service of the contract: its methods by name. */
export type CsiServiceDefinition = Record<string, CsiMethodDefinition>;

/**
 * The contract as data (protobufjs's JSON form of proto/csi.proto, made at build time), from
 * its root down to the package's node: the scopes a type name of the package is looked up in,
 * innermost last. The service definitions and the requests' size limits are read from it.
 */
export function csiPackageScopes(): SchemaNode[] {
  const scopes: SchemaNode[] = [CSI_SCHEMA];
  for (const part of CSI_PACKAGE.split('.')) {
    const next = scopes[scopes.length - 1]?.nested?.[part];
    if (next === undefined) throw new Error(`the schema has no package ${CSI_PACKAGE}`);
    scopes.push(next);
  }
  return scopes;
}

/** The package's node in the schema. */
function packageNode(): SchemaNode {
  return csiPackageScopes().at(-1)!;
}

function codecOf(name: string): CsiMessageCodec {
  const codec = codecs.v1[name];
  if (codec === undefined) throw new Error(`the compiled codec has no message ${CSI_PACKAGE}.${name}`);
  return codec;
}

/** What grpc-js sends: protobufjs's writer gives a Buffer under Node.js; anything else is wrapped, not copied. */
function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** The serializer and deserializer of a message type, as @grpc/proto-loader made them: fromObject then encode; decode then toObject. */
function codecFunctions(name: string): { serialize: (value: object) => Buffer; deserialize: (bytes: Buffer) => object } {
  const codec = codecOf(name);
  return {
    serialize: (value) => asBuffer(codec.encode(codec.fromObject(value)).finish()),
    deserialize: (bytes) => codec.toObject(codec.decode(bytes), CSI_CONVERSION),
  };
}

const lowerFirst = (s: string) => s.charAt(0).toLowerCase() + s.slice(1);

let cachedDefinition: Record<string, CsiServiceDefinition> | undefined;

/** The contract's services, keyed by full name ("csi.v1.Controller"). */
export function csiDefinition(): Record<string, CsiServiceDefinition> {
  if (cachedDefinition !== undefined) return cachedDefinition;
  const out: Record<string, CsiServiceDefinition> = {};
  for (const [service, node] of Object.entries(packageNode().nested ?? {})) {
    if (node.methods === undefined) continue;
    const methods: CsiServiceDefinition = {};
    for (const [method, m] of Object.entries(node.methods)) {
      if (m.requestStream === true || m.responseStream === true) throw new Error(`${service}.${method} streams; the contract Lode serves has unary calls only`);
      const req = codecFunctions(m.requestType);
      const res = codecFunctions(m.responseType);
      methods[method] = {
        path: `/${CSI_PACKAGE}.${service}/${method}`,
        requestStream: false,
        responseStream: false,
        requestSerialize: req.serialize,
        requestDeserialize: req.deserialize,
        responseSerialize: res.serialize,
        responseDeserialize: res.deserialize,
        originalName: lowerFirst(method),
        requestType: m.requestType,
        responseType: m.responseType,
      };
    }
    out[`${CSI_PACKAGE}.${service}`] = methods;
  }
  cachedDefinition = out;
  return out;
}

let cached: ProtoGrpcType | undefined;

/** The csi.v1 package: service constructors and definitions. */
export function csiPackage(): ProtoGrpcType {
  if (cached === undefined) {
    cached = grpc.loadPackageDefinition(csiDefinition()) as unknown as ProtoGrpcType;
  }
  return cached;
}
