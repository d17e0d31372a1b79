// The backends the conformance suite runs against: loop images, and quota directories on a filesystem made for the test (btrfs here; XFS and ext4 in the VM).
import assert from 'node:assert/strict';
import { constants, promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { run } from '../../src/sys/exec.js';
import { fileHash, MiB, writeRandomFile } from '../driver/support.js';
import { skipUnlessRequired } from '../helpers/prerequisites.js';
import type { BackendFixture, ForeignObject, PlantedObject, PoolMedium } from './fixture.js';

/** Whether `command` is an executable on PATH (or the sbin directories root has). */
export async function hasCommand(command: string): Promise<boolean> {
  const dirs = [...(process.env.PATH ?? '').split(':'), '/usr/sbin', '/sbin'];
  for (const dir of dirs.filter((d) => d !== '')) {
    if (await fs.access(path.join(dir, command), constants.X_OK).then(() => true, () => false)) return true;
  }
  return false;
}

/** Why a fixture needing root and `commands` cannot run here, or undefined. */
export async function missingPrerequisite(commands: readonly string[]): Promise<string | undefined> {
  if (process.getuid?.() !== 0) return 'needs root: it attaches loop devices and mounts filesystems';
  for (const cmd of commands) if (!(await hasCommand(cmd))) return `${cmd} is not installed`;
  return undefined;
}

/** Whether the running kernel can mount `fsType` (built in, or loaded now from a module). */
export async function kernelHas(fsType: string): Promise<boolean> {
  const listed = async () => (await fs.readFile('/proc/filesystems', 'utf8')).split('\n').some((l) => l.trim().split(/\s+/).pop() === fsType);
  if (await listed()) return true;
  await run('modprobe', [fsType]).catch(() => undefined);
  return listed();
}

/** The folder of the pool's volumes or of its snapshots, where a directory pool keeps their storage beside their records. */
function objectFolder(poolDir: string, kind: 'volume' | 'snapshot'): string {
  return path.join(poolDir, kind === 'volume' ? 'volumes' : 'snapshots');
}

/** A file of random bytes at `file`, as an image would be. */
export async function plantedFile(file: string): Promise<PlantedObject> {
  const hash = await writeRandomFile(file, 4 * MiB);
  return {
    async assertIntact() {
      assert.equal(await fileHash(file), hash, `${file} keeps every byte it was planted with`);
    },
    remove: () => fs.rm(file),
  };
}

/** A directory made by `make` (a plain one, a btrfs subvolume) holding one file of random bytes; `unmake` removes it. */
export async function plantedDirectory(dir: string, make = (d: string): Promise<unknown> => fs.mkdir(d), unmake = (d: string): Promise<unknown> => fs.rm(d, { recursive: true })): Promise<PlantedObject> {
  await make(dir);
  const file = path.join(dir, 'theirs');
  const hash = await writeRandomFile(file, MiB);
  const ino = (await fs.lstat(dir)).ino;
  return {
    async assertIntact() {
      assert.equal((await fs.lstat(dir)).ino, ino, `${dir} is still the directory planted`);
      assert.deepEqual(await fs.readdir(dir), ['theirs'], `${dir} holds what was planted and nothing more`);
      assert.equal(await fileHash(file), hash, `${file} keeps every byte it was planted with`);
    },
    remove: async () => { await unmake(dir); },
  };
}

/** What a loop pool can find where an image or a snapshot's file goes: both are what start-up would quarantine. */
const loopForeignObjects: readonly ForeignObject[] = [
  { what: 'an image file', quarantined: true, plant: (poolDir, kind, id) => plantedFile(path.join(objectFolder(poolDir, kind), `${id}.img`)) },
  { what: 'a directory of the image\'s name with a file in it', quarantined: true, plant: (poolDir, kind, id) => plantedDirectory(path.join(objectFolder(poolDir, kind), `${id}.img`)) },
];

/** What any directory pool can find where a volume's or snapshot's directory goes: a directory (start-up quarantines it), or a file, only in the way. */
export const dirForeignObjects: readonly ForeignObject[] = [
  { what: 'a directory with a file in it', quarantined: true, plant: (poolDir, kind, id) => plantedDirectory(path.join(objectFolder(poolDir, kind), id)) },
  { what: 'a regular file', quarantined: false, plant: (poolDir, kind, id) => plantedFile(path.join(objectFolder(poolDir, kind), id)) },
];

/** Loop images on a directory of the harness: the backend every Lode pool had before there were others. */
export const loopFixture: BackendFixture = {
  name: 'loop',
  async setup(): Promise<PoolMedium> {
    return { pool: { size: '1Gi' }, cleanup: async () => undefined };
  },
  capabilities: { rawBlock: true, fsTypes: ['ext4', 'xfs'], onlineGrowth: false, writers: 'bounded', snapshots: { independent: true } },
  async damage(poolDir, volumeId) {
    // What a careless rm or a replaced disk does: the loop device keeps the unlinked file open.
    await fs.rm(path.join(poolDir, 'volumes', `${volumeId}.img`));
  },
  foreignObjects: loopForeignObjects,
  unavailable: () => missingPrerequisite(['losetup', 'mkfs.ext4', 'mkfs.xfs']),
  failpointsNotReached: [],
};

/** How to make a filesystem that limits directories, for a `dir` pool. */
export interface QuotaFilesystem {
  /** The fixture's name, e.g. 'dir-xfs'. */
  name: string;
  /** The filesystem's type, the only fs_type its volumes offer. */
  fsType: string;
  /** Size of the sparse image it is made on. */
  imageMiB: number;
  /** The pool's size= option (exact capacity figures need one). */
  poolSize: string;
  /** mkfs command and its arguments before the device. */
  mkfs: readonly [string, ...string[]];
  /** Mount options that turn limits on (e.g. prjquota). */
  mountOptions: readonly string[];
  /** Whatever must run once mounted (btrfs quota enable). */
  enable?(mountPoint: string): Promise<void>;
  /** Tools the medium and the backend need besides mount and losetup. */
  commands: readonly string[];
  damage(poolDir: string, volumeId: string): Promise<void>;
  /** How far the filesystem's limits hold a volume's writers (FixtureCapabilities.writers). */
  writers: 'caught' | 'said';
  /** FixtureCapabilities.declares. */
  declares: RegExp;
  /** Objects of this filesystem's own to plant, besides a directory and a file (dirForeignObjects). */
  foreignObjects?: readonly ForeignObject[];
  /** A further reason not to run (e.g. only inside the test VM). */
  unavailable?(): Promise<string | undefined>;
}

/**
 * A `dir` backend fixture on `q`: a sparse image on the temp directory, a loop device of its
 * own, the filesystem mounted with limits on; all of it removed again by the medium's cleanup.
 * A guest test in the VM builds its XFS and ext4 fixtures with this, e.g. for XFS: mkfs
 * ['mkfs.xfs', '-q', '-f'], mountOptions ['prjquota'], an image of at least 2 GiB (xfs volumes
 * start at 300 MiB and the growth case doubles one), and `unavailable: async () => guestOnly || undefined`.
 */
export function quotaDirFixture(q: QuotaFilesystem): BackendFixture {
  return {
    name: q.name,
    async setup(): Promise<PoolMedium> {
      const undo: Array<() => Promise<unknown>> = [];
      const cleanup = async (): Promise<void> => {
        for (const step of undo.reverse()) await step();
        undo.length = 0;
      };
      try {
        const dir = await fs.mkdtemp(path.join(os.tmpdir(), `lode-medium-${q.fsType}-`));
        undo.push(() => fs.rm(dir, { recursive: true, force: true }));
        const image = path.join(dir, 'disk.img');
        await fs.writeFile(image, '');
        await fs.truncate(image, q.imageMiB * 2 ** 20);
        const device = (await run('losetup', ['--find', '--show', image])).stdout.trim();
        undo.push(() => run('losetup', ['-d', device]));
        const [mkfs, ...mkfsArgs] = q.mkfs;
        await run(mkfs, [...mkfsArgs, device]);
        const mountPoint = path.join(dir, 'pool');
        await fs.mkdir(mountPoint);
        await run('mount', ['-t', q.fsType, ...(q.mountOptions.length > 0 ? ['-o', q.mountOptions.join(',')] : []), device, mountPoint]);
        // A lazy unmount only if the plain one is refused: the medium must not outlive the test.
        undo.push(() => run('umount', [mountPoint]).catch(() => run('umount', ['-l', mountPoint])));
        await q.enable?.(mountPoint);
        return { pool: { dir: mountPoint, extra: 'backend=dir', size: q.poolSize }, cleanup };
      } catch (err) {
        await cleanup();
        throw err;
      }
    },
    // No freeze: a directory volume's filesystem is the pool's own, shared by every volume. The
    // freeze failpoint under each name it has had (one for both copies, or a snapshot's and a clone's).
    capabilities: {
      rawBlock: false, fsTypes: [q.fsType], onlineGrowth: true, writers: q.writers, declares: q.declares,
      snapshots: { independent: true, notReached: ['copy:frozen', 'snapshot:frozen', 'clone:frozen'] },
    },
    damage: (poolDir, volumeId) => q.damage(poolDir, volumeId),
    foreignObjects: [...dirForeignObjects, ...(q.foreignObjects ?? [])],
    // A directory volume is bind-mounted as it is: nothing to attach, format or mount a device of.
    failpointsNotReached: ['stage:attached', 'stage:formatted', 'stage:mounted'],
    async unavailable() {
      const other = await q.unavailable?.();
      if (other !== undefined) return other;
      const missing = await missingPrerequisite(['losetup', ...q.commands]);
      if (missing !== undefined) return missing;
      return (await kernelHas(q.fsType)) ? undefined : `this kernel cannot mount ${q.fsType}`;
    },
  };
}

/** A btrfs subvolume's root directory always has inode 256; a plain directory never does. */
async function isSubvolume(dir: string): Promise<boolean> {
  return (await fs.stat(dir)).ino === 256;
}

/**
 * btrfs: one subvolume per volume with a qgroup limit. Damage deletes the volume's subvolume
 * (or directory); where btrfs refuses that, it removes the limit, which is as much a broken
 * volume for a backend that promises one. Full qgroups unless a fixture switches on simple ones.
 */
function dirBtrfsQuota(): QuotaFilesystem {
  return {
    name: 'dir-btrfs',
    fsType: 'btrfs',
    imageMiB: 1024,
    poolSize: '768Mi',
    mkfs: ['mkfs.btrfs', '-q', '-f'],
    mountOptions: [],
    enable: async (mountPoint) => { await run('btrfs', ['quota', 'enable', mountPoint]); },
    commands: ['mkfs.btrfs', 'btrfs'],
    writers: 'caught',
    declares: /full qgroups/,
    // A subvolume is what a btrfs pool makes for a volume: with no record, start-up quarantines it.
    foreignObjects: [{
      what: 'a btrfs subvolume with a file in it',
      quarantined: true,
      plant: (poolDir, kind, id) => plantedDirectory(path.join(objectFolder(poolDir, kind), id),
        (d) => run('btrfs', ['subvolume', 'create', d]), (d) => run('btrfs', ['subvolume', 'delete', d])),
    }],
    async damage(poolDir, volumeId) {
      const dir = path.join(poolDir, 'volumes', volumeId);
      if (!(await isSubvolume(dir))) {
        await fs.rm(dir, { recursive: true });
        return;
      }
      try {
        await run('btrfs', ['subvolume', 'delete', dir]);
      } catch {
        await run('btrfs', ['qgroup', 'limit', 'none', dir]);
      }
    },
  };
}

const dirBtrfsOnHost = quotaDirFixture(dirBtrfsQuota());

/** dir pools on btrfs with full qgroups; CI installs btrfs-progs, so there a missing piece fails rather than skips. */
export const dirBtrfsFixture: BackendFixture = {
  ...dirBtrfsOnHost,
  unavailable: async () => skipUnlessRequired(await dirBtrfsOnHost.unavailable(), 'apt-get install -y btrfs-progs'),
};

/**
 * Why btrfs simple quotas (squota) cannot be had here, or undefined: the kernel needs 6.7 or
 * later, btrfs-progs 6.7 or later to switch them on (Debian bookworm has 6.2, its backports
 * 6.14, which .ci/run installs).
 */
export async function simpleQuotasMissing(): Promise<string | undefined> {
  const [major = 0, minor = 0] = (await fs.readFile('/proc/sys/kernel/osrelease', 'utf8')).split('.').map((n) => Number.parseInt(n, 10));
  if (major < 6 || (major === 6 && minor < 7)) return `this kernel (${major}.${minor}) has no btrfs simple quotas (6.7 and later)`;
  const help = await run('btrfs', ['quota', 'enable', '--help']).then((r) => r.stdout + r.stderr, (err: unknown) => String(err));
  if (!help.includes('--simple')) return 'btrfs-progs cannot switch on simple quotas (6.7 and later can: apt-get install -t bookworm-backports btrfs-progs)';
  return undefined;
}

/** btrfs with simple quotas: each volume's subvolume under a qgroup of its own that subvolumes made inside it join. */
export const dirBtrfsSimpleFixture: BackendFixture = quotaDirFixture({
  ...dirBtrfsQuota(),
  name: 'dir-btrfs-simple',
  declares: /naming another qgroup/,
  enable: async (mountPoint) => { await run('btrfs', ['quota', 'enable', '--simple', mountPoint]); },
  async unavailable() {
    const missing = await simpleQuotasMissing();
    // CI installs what it needs: a missing one there is a broken set-up, not a skip.
    return skipUnlessRequired(missing);
  },
});
