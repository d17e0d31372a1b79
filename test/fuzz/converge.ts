// Test support for the kill campaigns: a call retried after the driver's restart as kubelet and the sidecars would retry it, where only a driver still coming up excuses a failure.
import { status } from '@grpc/grpc-js';
import { grpcCode } from '../../src/csi/client.js';

/** Tries a call this many times at most before the campaign fails on it. */
export const MAX_RETRIES = 20;

/** Retries `call` while it fails with a code a restarting driver gives (UNAVAILABLE, ABORTED, DEADLINE_EXCEEDED); any other failure, or too many, fails with what it was. */
export async function converge(what: string, call: () => Promise<unknown>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await call();
      return;
    } catch (err) {
      const code = grpcCode(err);
      const transient = code === status.UNAVAILABLE || code === status.ABORTED || code === status.DEADLINE_EXCEEDED;
      if (!transient || attempt >= MAX_RETRIES) {
        throw new Error(`${what} did not converge after ${attempt} attempt(s): ${code === undefined ? String(err) : status[code]} ${String((err as { details?: unknown }).details ?? '')}`);
      }
      await new Promise((res) => setTimeout(res, 100));
    }
  }
}
