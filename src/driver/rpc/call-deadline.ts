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
  // A client ends its call at its deadline on its own clock and the driver sees a cancellation.
  // The deadline reaches the driver as time remaining when the client sent the call, so the
  // driver's copy runs late by however long the call took to arrive: a few milliseconds on an idle
  // machine, hundreds on a loaded one (a CI run: 3 s calls logged as cancelled). A cancellation in
  // the last quarter of the call's time, up to a second before the driver's copy of the deadline,
  // is that deadline; an earlier one, a client that gave up.
  const margin = Math.min(1000, Math.max(20, waitMs / 4));
  const onCancelled = () => controller.abort(Date.now() >= clientEnd - margin
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
