// Test support: a small tmpfs of a test's own, so filling it up or failing to fit touches nothing else on the machine.
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { run } from '../../src/sys/exec.js';

/** Mounts a tmpfs of `size` (mount's syntax, e.g. "64m") on a new directory, unmounted and removed after the test. */
export async function smallFilesystem(t: { after: (fn: () => Promise<void>) => void }, size: string, prefix = 'lode-small-fs-'): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), prefix));
  await run('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir]);
  t.after(async () => {
    await run('umount', [dir]);
    await fs.rm(dir, { recursive: true, force: true });
  });
  return dir;
}
