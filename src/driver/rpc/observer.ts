// The interface through which the driver reports the calls it serves, so metrics stay out of the RPC code.

/** Told about every finished RPC. */
export interface RpcObserver {
  /** `code` is the gRPC status name, e.g. "OK", "NOT_FOUND"; `seconds` the wall time of the call. */
  onRpc(method: string, code: string, seconds: number): void;
}
