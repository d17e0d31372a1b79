// Typed driver errors carrying their gRPC status, and the single mapping from any thrown value to a status.
import { status } from '@grpc/grpc-js';
import { VolumeQuarantinedError } from '../../pool/quarantine.js';
import { StorageOccupiedError } from '../../pool/occupied.js';
import { SnapshotRefusedError } from '../../pool/snapshot-refused.js';
import { PoolFullError, VolumeTooLargeError } from '../../pool/space-errors.js';
import { NotEmpty, PathChanged, PathRefused } from '../../sys/beneath.js';
import { ExecError } from '../../sys/exec.js';

/** An error whose gRPC status code is decided where it is raised. */
export class CsiError extends Error {
  constructor(readonly code: status, message: string) {
    super(message);
    this.name = 'CsiError';
  }
}

export const invalidArgument = (msg: string) => new CsiError(status.INVALID_ARGUMENT, msg);
export const notFound = (msg: string) => new CsiError(status.NOT_FOUND, msg);
export const alreadyExists = (msg: string) => new CsiError(status.ALREADY_EXISTS, msg);
export const failedPrecondition = (msg: string) => new CsiError(status.FAILED_PRECONDITION, msg);
export const outOfRange = (msg: string) => new CsiError(status.OUT_OF_RANGE, msg);
export const resourceExhausted = (msg: string) => new CsiError(status.RESOURCE_EXHAUSTED, msg);
export const aborted = (msg: string) => new CsiError(status.ABORTED, msg);
export const internal = (msg: string) => new CsiError(status.INTERNAL, msg);
export const unavailable = (msg: string) => new CsiError(status.UNAVAILABLE, msg);

/** The status a failed call answers with. Platform errors are mapped here and nowhere else. */
export function toStatus(err: unknown): { code: status; details: string } {
  if (err instanceof CsiError) return { code: err.code, details: err.message };
  // Full here may fit elsewhere: RESOURCE_EXHAUSTED is what makes the provisioner reschedule.
  if (err instanceof PoolFullError) return { code: status.RESOURCE_EXHAUSTED, details: err.message };
  if (err instanceof VolumeTooLargeError) return { code: err.growth ? status.OUT_OF_RANGE : status.RESOURCE_EXHAUSTED, details: err.message };
  // A stage or publish path that cannot be used beneath its root is always the caller's path.
  if (err instanceof PathRefused) return { code: status.INVALID_ARGUMENT, details: err.message };
  if (err instanceof NotEmpty) return { code: status.FAILED_PRECONDITION, details: err.message };
  // Someone changed the path while the call used it (a component swapped, removed, recreated):
  // a concurrency conflict in the CSI spec's terms, which the CO meets by retrying.
  if (err instanceof PathChanged) return { code: status.ABORTED, details: `${err.message}; retry` };
  // The node's state is at fault, not the call: it succeeds once an operator repairs the record.
  if (err instanceof VolumeQuarantinedError) return { code: status.FAILED_PRECONDITION, details: err.message };
  // Something Lode did not make takes the new storage's place: the node's state, for an operator to clear.
  if (err instanceof StorageOccupiedError) return { code: status.FAILED_PRECONDITION, details: err.message };
  // A pool not set up to snapshot (a thick lvm pool without snapshot-size=), or a snapshot LVM invalidated.
  if (err instanceof SnapshotRefusedError) return { code: status.FAILED_PRECONDITION, details: err.message };
  if (err instanceof ExecError) {
    // No space left while a tool wrote into a pool is the pool being full, which the
    // provisioner must see as RESOURCE_EXHAUSTED to reschedule.
    if (/No space left on device/i.test(err.stderr)) return { code: status.RESOURCE_EXHAUSTED, details: err.message };
    // An unmount refused because the mount is in use (a mount below it, an open file, a process
    // inside) is the node's state, not the driver's fault: the call is retried once it is free.
    if (err.command === 'umount' && /target is busy/i.test(err.stderr)) return { code: status.FAILED_PRECONDITION, details: err.message };
    return { code: status.INTERNAL, details: err.message };
  }
  const errno = (err as NodeJS.ErrnoException | undefined)?.code;
  if (errno === 'ENOSPC' || errno === 'EDQUOT') {
    return { code: status.RESOURCE_EXHAUSTED, details: (err as Error).message };
  }
  if (err instanceof Error) return { code: status.INTERNAL, details: err.message };
  return { code: status.INTERNAL, details: String(err) };
}

/** gRPC status names for logs and metrics labels ("OK", "NOT_FOUND", ...). */
export function statusName(code: status): string {
  return status[code] ?? String(code);
}
