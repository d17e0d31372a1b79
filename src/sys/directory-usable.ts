// Whether a pool's directory can still take new volumes, asked without leaving the event loop: Probe and /healthz ask it on every call.
import { accessSync, constants as fsConstants, statfsSync } from 'node:fs';

/**
 * Why `dir` cannot take new files (gone, not writable, its filesystem failing), or undefined
 * when it can. Both system calls are made at once, not on the thread pool: on the local
 * filesystems pools live on, a permission check and a statfs read memory, a few microseconds,
 * where each trip through the thread pool cost a Probe about 0.15 ms (npm run bench, (e)). A
 * filesystem hung badly enough to block them blocks every volume call of the pool as well, and
 * the liveness probe then restarts the driver either way.
 */
export function directoryProblem(dir: string): string | undefined {
  try {
    accessSync(dir, fsConstants.W_OK);
    statfsSync(dir);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}
