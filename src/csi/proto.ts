// Loads Lode's CSI protobuf contract once and exposes the typed service definitions.
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type { ProtoGrpcType } from '../gen/csi.js';

/** Where the .proto lives, relative to the compiled module (dist/src/csi). */
export const CSI_PROTO_PATH = fileURLToPath(new URL('../../../proto/csi.proto', import.meta.url));

/**
 * Loader options shared by server and clients. int64 fields travel as decimal strings so
 * sizes above 2^53 are never silently rounded; `defaults` fills omitted fields so a
 * missing message reads as null and a missing string as "", which validation relies on.
 */
export const CSI_LOADER_OPTIONS: protoLoader.Options = {
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
};

let cached: ProtoGrpcType | undefined;
let cachedDefinition: protoLoader.PackageDefinition | undefined;

/** The loaded contract with its message descriptors, for checks that follow the schema. */
export function csiDefinition(): protoLoader.PackageDefinition {
  cachedDefinition ??= protoLoader.loadSync(CSI_PROTO_PATH, CSI_LOADER_OPTIONS);
  return cachedDefinition;
}

/** The csi.v1 package: service constructors and definitions. */
export function csiPackage(): ProtoGrpcType {
  if (cached === undefined) {
    cached = grpc.loadPackageDefinition(csiDefinition()) as unknown as ProtoGrpcType;
  }
  return cached;
}
