// A simulated node's disk for a quota-directory pool: a real btrfs with quotas on, in a sparse image behind a loop device.
import { closeSync, mkdirSync, openSync, rmSync, truncateSync } from 'node:fs';
import { run, type ExecResult } from '../../sys/exec.js';
import { attachNewLoop, detachLoop } from '../../sys/loop.js';
import { mountAt, readMountTable, type MountEntry } from '../../sys/mounts.js';

const MiB = 2 ** 20;

/**
 * The image's size for a pool handing out `poolBytes`: btrfs keeps metadata (twice, on one
 * device) and its own reserve, and the dir backend never offers more than the filesystem can
 * physically still hold, so the disk gets room beyond the pool's size. Sparse: it costs what
 * is written.
 */
export function mediumBytes(poolBytes: number): number {
  return Math.ceil((poolBytes * 1.5 + 160 * MiB) / MiB) * MiB;
}

/** The mount namespace a medium is mounted in: a simulated node's (NodeNamespace), or the host's. */
export interface MountPlace {
  run(command: string, args: readonly string[]): Promise<ExecResult>;
  mounts(): Promise<MountEntry[]>;
}

/** The bench process's own mount namespace, for a medium used outside any node (the data-path benchmark). */
export const HOST_MOUNTS: MountPlace = { run: (command, args) => run(command, args), mounts: () => readMountTable() };

/** Where one medium lives: its image, and the directory it is mounted at (the pool's directory) in its node's mount namespace. */
export class BtrfsMedium {
  private device: string | undefined;

  constructor(readonly image: string, readonly mountPoint: string, readonly poolBytes: number, private readonly ns: MountPlace) {}

  private async mounted(): Promise<boolean> {
    return mountAt(await this.ns.mounts(), this.mountPoint) !== undefined;
  }

  /** Makes the filesystem the first time, and mounts it with quotas on; a medium already mounted is kept. */
  async ensure(): Promise<void> {
    if (await this.mounted()) return;
    mkdirSync(this.mountPoint, { recursive: true });
    if (this.device === undefined) {
      closeSync(openSync(this.image, 'a'));
      truncateSync(this.image, mediumBytes(this.poolBytes));
      this.device = (await attachNewLoop(this.image, false, true)).device;
      // Mixed block groups: the layout btrfs recommends for filesystems under a few GiB.
      await run('mkfs.btrfs', ['-q', '-f', '-M', this.device]);
    }
    // A medium unmounted behind the bench's back is mounted again from its own device.
    await this.ns.run('mount', [this.device, this.mountPoint]);
    await this.ns.run('btrfs', ['quota', 'enable', this.mountPoint]);
  }

  /** Unmounts it, detaches the device and removes the image: the bench's nodes end with their run. */
  async release(): Promise<void> {
    if (await this.mounted()) await this.ns.run('umount', [this.mountPoint]);
    if (this.device !== undefined) await detachLoop(this.device);
    this.device = undefined;
    rmSync(this.image, { force: true });
  }
}
