// Freezing a mounted filesystem for a point-in-time copy of the device under it, and thawing it whatever happened.
import { outsideCall } from '../util/call-signal.js';
import { ExecError, run } from './exec.js';

/**
 * Flushes the filesystem mounted at `mountPoint` and holds every new write until `thaw`, so a
 * copy of its device taken now is what a crash at this instant would leave on disk.
 */
export async function freeze(mountPoint: string): Promise<void> {
  await run('fsfreeze', ['--freeze', mountPoint]);
}

/**
 * Lets writes through again. Runs outside the call's deadline (a filesystem left frozen hangs
 * every writer in the pod); one that is not frozen (already thawed, or not mounted any more
 * after a reboot) is not an error, so a thaw is safe to repeat after a crash.
 */
export async function thaw(mountPoint: string): Promise<void> {
  await outsideCall(async () => {
    try {
      await run('fsfreeze', ['--unfreeze', mountPoint]);
    } catch (err) {
      // EINVAL: not frozen; ENOENT / not a mount point: nothing there to hold writes.
      if (err instanceof ExecError && /Invalid argument|not a mount ?point|No such file|not found/i.test(err.stderr)) return;
      throw err;
    }
  });
}
