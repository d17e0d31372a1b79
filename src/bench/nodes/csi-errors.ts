// gRPC status codes of driver errors, named and worded the way Go's grpc status prints them in Kubernetes events.
import { grpcCode } from '../../csi/client.js';

const NAMES = ['OK', 'Canceled', 'Unknown', 'InvalidArgument', 'DeadlineExceeded', 'NotFound', 'AlreadyExists', 'PermissionDenied',
  'ResourceExhausted', 'FailedPrecondition', 'Aborted', 'OutOfRange', 'Unimplemented', 'Internal', 'Unavailable', 'DataLoss', 'Unauthenticated'];

export const CODE = {
  INVALID_ARGUMENT: 3, DEADLINE_EXCEEDED: 4, NOT_FOUND: 5, RESOURCE_EXHAUSTED: 8, ABORTED: 10, UNAVAILABLE: 14, CANCELED: 1,
} as const;

/** "ResourceExhausted", or "NonGRPC" for errors without a status code. */
export function codeName(err: unknown): string {
  const c = grpcCode(err);
  return c === undefined ? 'NonGRPC' : (NAMES[c] ?? `Code(${c})`);
}

/** The details of a gRPC error without grpc-js's "8 RESOURCE_EXHAUSTED: " prefix. */
export function errorDetails(err: unknown): string {
  if (typeof err === 'object' && err !== null && 'details' in err && typeof (err as { details: unknown }).details === 'string') {
    return (err as { details: string }).details;
  }
  return err instanceof Error ? err.message : String(err);
}

/** "rpc error: code = ResourceExhausted desc = pool fast has 10Mi free" */
export function rpcErrorText(err: unknown): string {
  const c = grpcCode(err);
  if (c === undefined) return errorDetails(err);
  return `rpc error: code = ${codeName(err)} desc = ${errorDetails(err)}`;
}

/** Codes after which the provisioner keeps retrying in the background (the operation may still be running). */
export function isFinalError(err: unknown): boolean {
  const c = grpcCode(err);
  return !(c === undefined || c === CODE.CANCELED || c === CODE.DEADLINE_EXCEEDED || c === CODE.UNAVAILABLE || c === CODE.ABORTED);
}
