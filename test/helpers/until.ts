// Waiting in tests: poll a condition until it holds, bounded against a hang (never a speed check), and whether a process is still alive.
import { readFileSync } from 'node:fs';

/** Polls `check` until it holds; a bound against a hang, not a speed check. */
export async function until(what: string, check: () => boolean, boundMs = 30_000): Promise<void> {
  const deadline = Date.now() + boundMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** `until` for a check that must ask something (a gRPC call, a file): polled until it holds, bounded against a hang. */
export async function untilAsync(what: string, check: () => Promise<boolean>, boundMs = 30_000): Promise<void> {
  const deadline = Date.now() + boundMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Whether a process exists and is not a zombie (killed, not yet reaped by whoever adopted it: dead all the same). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}
