// Turns async CSI handlers into grpc-js handlers: bounds before work, a deadline for the work, statuses for failures, a log line and an observation per call.
import { status, type handleUnaryCall, type ServerUnaryCall, type UntypedHandleCall, type UntypedServiceImplementation } from '@grpc/grpc-js';
import type { CsiServiceDefinition } from '../../csi/proto.js';
import { withCallSignal } from '../../util/call-signal.js';
import { log, logEnabled } from '../../util/log.js';
import { boundsFor, type BoundsCheck } from './bounds.js';
import { callEnd, MAX_CALL_MS } from './call-deadline.js';
import { CsiError, statusName, toStatus } from './errors.js';
import type { RpcObserver } from './observer.js';
import { printable } from './printable.js';

type AsyncHandler<Req, Res> = (req: Req) => Promise<Res>;

/** What the server's request decoder hands over instead of a request it could not decode. */
export class UndecodableRequest {
  constructor(readonly problem: string) {}
}

/**
 * The most a status message carries, in bytes. grpc sends it in the trailers; one of about
 * 75 KB or more never reaches the client, and the connection hangs with it. Messages quote
 * callers' fields, so they are cut here, whatever raised them.
 */
export const MAX_DETAILS_BYTES = 512;

/** `details` cut to MAX_DETAILS_BYTES of UTF-8, never inside a character. */
export function capDetails(details: string): string {
  // More UTF-16 units than bytes allowed means it is too long whatever they encode to.
  const head = details.length > MAX_DETAILS_BYTES ? details.slice(0, MAX_DETAILS_BYTES + 1) : details;
  const buf = Buffer.from(head, 'utf8');
  if (buf.length <= MAX_DETAILS_BYTES) return buf.toString('utf8');
  let end = MAX_DETAILS_BYTES - 3;
  while (end > 0 && ((buf[end] ?? 0) & 0xc0) === 0x80) end--; // back to the start of a character
  return buf.subarray(0, end).toString('utf8') + '...';
}

/**
 * Calls that sidecars and kubelet repeat on a timer: logged at debug when they succeed.
 * GetCapacity is csi-provisioner's capacity tracking, polled for every storage class and
 * topology segment, and read again after each create and delete.
 */
const ROUTINE_METHODS = new Set([
  'Probe', 'GetPluginInfo', 'GetPluginCapabilities', 'ControllerGetCapabilities', 'NodeGetCapabilities', 'NodeGetInfo', 'GetCapacity',
]);

/** Fields that identify the volume a request is about, for the log line (a prefix: the field may be anything). */
function volumeOf(req: unknown): string | undefined {
  if (typeof req !== 'object' || req === null) return undefined;
  const r = req as { volume_id?: unknown; name?: unknown };
  if (typeof r.volume_id === 'string' && r.volume_id !== '') return printable(r.volume_id);
  if (typeof r.name === 'string' && r.name !== '') return printable(r.name);
  return undefined;
}

/**
 * grpc-js does not turn a rejected promise from a handler into a status (the call would
 * hang or crash the process), so every handler goes through here. In order: a request that
 * did not decode or that breaks the spec's size limits is refused before the handler sees
 * it; the handler runs under the call's signal (see call-signal), so its tools die when the
 * call's deadline passes or its client cancels; a failure after that answers
 * DEADLINE_EXCEEDED or CANCELLED, whatever the handler made of its killed tool.
 */
export function unary<Req, Res>(
  method: string, handler: AsyncHandler<Req, Res>, bounds: BoundsCheck, observer?: RpcObserver, maxCallMs = MAX_CALL_MS,
): handleUnaryCall<Req, Res> {
  return (call, callback) => {
    const started = process.hrtime.bigint();
    const request: unknown = call.request;
    const finish = (code: number, details?: string, cause?: string) => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const codeName = statusName(code);
      const level = code !== 0 ? 'warn' : ROUTINE_METHODS.has(method) ? 'debug' : 'info';
      // The line's fields are built only when it is written: routine calls are the most frequent.
      if (logEnabled(level)) {
        const volume = volumeOf(request);
        log(level, 'rpc', {
          method, ...(volume !== undefined ? { volume } : {}), code: codeName,
          durationMs: Math.round(seconds * 1e6) / 1e3, ...(details !== undefined ? { error: details } : {}),
          ...(cause !== undefined && cause !== details ? { cause } : {}),
        });
      }
      observer?.onRpc(method, codeName, seconds);
    };
    const end = callEnd(call as ServerUnaryCall<unknown, unknown>, maxCallMs);
    let pending: Promise<Res>;
    try {
      if (request instanceof UndecodableRequest) {
        throw new CsiError(status.INVALID_ARGUMENT, `the request is not a valid ${method} request message: ${request.problem}`);
      }
      bounds(request);
      pending = withCallSignal(end.signal, () => handler(call.request));
    } catch (err) {
      pending = Promise.reject(err);
    }
    pending.then(
      (res) => {
        end.dispose();
        finish(0);
        callback(null, res);
      },
      (err: unknown) => {
        end.dispose();
        const own = toStatus(err);
        const { code, details } = end.signal.aborted ? toStatus(end.signal.reason) : own;
        const capped = capDetails(details);
        finish(code, capped, end.signal.aborted ? capDetails(own.details) : undefined);
        callback({ code, details: capped, name: 'Error', message: capped });
      },
    );
  };
}

/** Wraps every handler of a service object; `service` is its definition in the contract, which the size limits follow. */
export function adaptService<T extends Record<string, AsyncHandler<never, unknown>>>(
  service: CsiServiceDefinition, handlers: T, observer?: RpcObserver,
): UntypedServiceImplementation {
  const out: UntypedServiceImplementation = {};
  for (const [method, fn] of Object.entries(handlers)) {
    const type = service[method]?.requestType;
    if (type === undefined) throw new Error(`${method} is not a method of the service`);
    out[method] = unary(method, fn as AsyncHandler<unknown, unknown>, boundsFor(type), observer) as UntypedHandleCall;
  }
  return out;
}
