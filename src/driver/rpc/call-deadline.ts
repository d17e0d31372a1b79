// When a CSI call is over: its client's deadline, its client's cancellation or the driver's own maximum, as one AbortSignal.
import { status, type ServerUnaryCall } from '@grpc/grpc-js';
import { CsiError } from './errors.js';

/**
 * The longest any call may run, also when its client set no deadline: long enough for the
 * slowest tool Lode runs (mkfs of a large image, the same 5 minutes a tool gets outside a
 * call), short enough that a stuck tool cannot hold a volume's lock for good.
 */
export const MAX_CALL_MS = 5 * 60_000;

export interface CallEnd {
  /** Aborts, with a CsiError saying why, when the call is over. */
  readonly signal: AbortSignal;
  /** Stops watching (the call answered). */
  dispose(): void;
}

export function callEnd(call: ServerUnaryCall<unknown, unknown>, maxMs = MAX_CALL_MS): CallEnd {
  const controller = new AbortController();
  const now = Date.now();
  const deadline = call.getDeadline();
  const clientEnd = deadline instanceof Date ? deadline.getTime() : deadline; // Infinity when none was set
  const ownLimit = clientEnd > now + maxMs;
  const waitMs = Math.max(0, Math.min(clientEnd, now + maxMs) - now);
  const expired = () => new CsiError(status.DEADLINE_EXCEEDED, ownLimit
    ? `the call ran into the driver's limit of ${maxMs / 1000} s per call; its tools were stopped`
    : `the call's deadline passed after ${waitMs} ms; its tools were stopped`);
  const timer = setTimeout(() => controller.abort(expired()), waitMs);
  // grpc-js ends a call at its deadline on its own clock, which started earlier than ours, and
  // reports that as a cancellation: it is one only while the deadline is still ahead (by more
  // than the few milliseconds its timer and the wall clock may disagree).
  const onCancelled = () => controller.abort(Date.now() >= clientEnd - 20
    ? expired()
    : new CsiError(status.CANCELLED, 'the client cancelled the call; its tools were stopped'));
  call.once('cancelled', onCancelled);
  return {
    signal: controller.signal,
    dispose: () => {
      clearTimeout(timer);
      call.removeListener('cancelled', onCancelled);
    },
  };
}
