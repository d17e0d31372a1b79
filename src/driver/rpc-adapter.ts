// Turns async CSI handlers into grpc-js handlers: rejected promises become statuses, and every call is logged and observed.
import type * as grpc from '@grpc/grpc-js';
import { log } from '../util/log.js';
import { statusName, toStatus } from './errors.js';
import type { RpcObserver } from './observer.js';

type AsyncHandler<Req, Res> = (req: Req) => Promise<Res>;

/** Fields that identify the volume a request is about, for the log line. */
function volumeOf(req: unknown): string | undefined {
  if (typeof req !== 'object' || req === null) return undefined;
  const r = req as { volume_id?: unknown; name?: unknown };
  if (typeof r.volume_id === 'string' && r.volume_id !== '') return r.volume_id;
  if (typeof r.name === 'string' && r.name !== '') return r.name;
  return undefined;
}

/**
 * grpc-js does not turn a rejected promise from a handler into a status (the call would
 * hang or crash the process), so every handler goes through here.
 */
export function unary<Req, Res>(method: string, handler: AsyncHandler<Req, Res>, observer?: RpcObserver): grpc.handleUnaryCall<Req, Res> {
  return (call, callback) => {
    const started = process.hrtime.bigint();
    const finish = (code: number, details?: string) => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const codeName = statusName(code);
      const volume = volumeOf(call.request);
      log(code === 0 ? 'info' : 'warn', 'rpc', {
        method, ...(volume !== undefined ? { volume } : {}), code: codeName,
        durationMs: Math.round(seconds * 1e6) / 1e3, ...(details !== undefined ? { error: details } : {}),
      });
      observer?.onRpc(method, codeName, seconds);
    };
    let pending: Promise<Res>;
    try {
      pending = handler(call.request);
    } catch (err) {
      pending = Promise.reject(err);
    }
    pending.then(
      (res) => {
        finish(0);
        callback(null, res);
      },
      (err: unknown) => {
        const { code, details } = toStatus(err);
        finish(code, details);
        callback({ code, details, name: 'Error', message: details });
      },
    );
  };
}

/** Wraps every handler of a service object. */
export function adaptService<T extends Record<string, AsyncHandler<never, unknown>>>(
  handlers: T, observer?: RpcObserver,
): grpc.UntypedServiceImplementation {
  const out: grpc.UntypedServiceImplementation = {};
  for (const [method, fn] of Object.entries(handlers)) {
    out[method] = unary(method, fn as AsyncHandler<unknown, unknown>, observer) as grpc.UntypedHandleCall;
  }
  return out;
}
