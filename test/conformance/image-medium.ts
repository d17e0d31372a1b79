// A filesystem made for one test: a sparse image on the temp directory, a loop device of its own, mounted; removed again by its cleanup.
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { run } from '../../src/sys/exec.js';

export interface MountedImage {
  mountPoint: string;
  /** Unmounts, detaches and removes it all, in reverse order; safe to call twice. */
  cleanup(): Promise<void>;
}

/** Makes and mounts a filesystem of `imageMiB` with `mkfs` (command and arguments before the device). */
export async function mountedImage(fsType: string, imageMiB: number, mkfs: readonly [string, ...string[]], mountOptions: readonly string[] = []): Promise<MountedImage> {
  const undo: Array<() => Promise<unknown>> = [];
  const cleanup = async (): Promise<void> => {
    for (const step of undo.reverse()) await step();
    undo.length = 0;
  };
  try {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), `lode-medium-${fsType}-`));
    undo.push(() => fs.rm(dir, { recursive: true, force: true }));
    const image = path.join(dir, 'disk.img');
    await fs.writeFile(image, '');
    await fs.truncate(image, imageMiB * 2 ** 20);
    const device = (await run('losetup', ['--find', '--show', image])).stdout.trim();
    undo.push(() => run('losetup', ['-d', device]));
    const [command, ...args] = mkfs;
    await run(command, [...args, device]);
    const mountPoint = path.join(dir, 'pool');
    await fs.mkdir(mountPoint);
    await run('mount', ['-t', fsType, ...(mountOptions.length > 0 ? ['-o', mountOptions.join(',')] : []), device, mountPoint]);
    // A lazy unmount only if the plain one is refused: the medium must not outlive the test.
    undo.push(() => run('umount', [mountPoint]).catch(() => run('umount', ['-l', mountPoint])));
    return { mountPoint, cleanup };
  } catch (err) {
    await cleanup();
    throw err;
  }
}
