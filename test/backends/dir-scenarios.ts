// The behaviour every filesystem of the `dir` backend must show, driven through DirBackend on a real filesystem: one set of tests for btrfs (here) and XFS and ext4 (in the VM).
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, stat, statfs, writeFile } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { DirBackend } from '../../src/backends/dir/dir-backend.js';
import type { PoolConfig } from '../../src/pool/pool.js';
import { newVolumeRecord, type VolumeRecord } from '../../src/pool/volume-record.js';
import { nowWithNanos, SNAPSHOT_RECORD_VERSION, type SnapshotRecord } from '../../src/pool/snapshot-record.js';
import { readMountTable } from '../../src/sys/mounts.js';

export const MiB = 2 ** 20;

export interface Cmd {
  code: number;
  stdout: string;
  stderr: string;
}

export function cmd(command: string, args: readonly string[]): Promise<Cmd> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { maxBuffer: 16 * MiB, env: { ...process.env, LC_ALL: 'C' } }, (err, stdout, stderr) => {
      if (err && typeof err.code !== 'number') return reject(err);
      resolve({ code: err ? Number(err.code) : 0, stdout, stderr });
    });
  });
}

export async function sh(command: string, args: readonly string[]): Promise<string> {
  const r = await cmd(command, args);
  if (r.code !== 0) throw new Error(`${command} ${args.join(' ')} exited ${r.code}: ${r.stderr.trim() || r.stdout.trim()}`);
  return r.stdout;
}

/** A scratch filesystem on a sparse image behind a loop device of this test's own, all removed after `t`. */
export async function scratchFilesystem(t: TestContext, sizeMiB: number, mkfs: readonly string[], mountOptions: readonly string[] = []): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'lode-dirfs-'));
  const image = path.join(dir, 'disk.img');
  const mnt = path.join(dir, 'mnt');
  await mkdir(mnt);
  await sh('truncate', ['-s', `${sizeMiB}M`, image]);
  const device = (await sh('losetup', ['--find', '--show', image])).trim();
  let mounted = false;
  t.after(async () => {
    // A pool's background health check (a quota tool on the mount) started by the test's last
    // call may still be running for a moment: busy until it ends.
    for (let tries = 0; mounted; tries++) {
      const r = await cmd('umount', [mnt]);
      if (r.code === 0) break;
      if (!/busy/.test(r.stderr) || tries >= 50) throw new Error(`umount ${mnt} exited ${r.code}: ${r.stderr.trim()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await sh('losetup', ['-d', device]);
    await rm(dir, { recursive: true, force: true });
  });
  await sh(mkfs[0] ?? 'false', [...mkfs.slice(1), device]);
  await sh('mount', [...(mountOptions.length > 0 ? ['-o', mountOptions.join(',')] : []), device, mnt]);
  mounted = true;
  return mnt;
}

/** Mounts a tmpfs at `where` for the rest of `t` (something else mounted inside a volume). */
export async function tmpfsAt(t: TestContext, where: string): Promise<() => Promise<void>> {
  await mkdir(where, { recursive: true });
  await sh('mount', ['-t', 'tmpfs', 'tmpfs', where]);
  let up = true;
  const down = async () => {
    if (up) await sh('umount', [where]);
    up = false;
  };
  t.after(down);
  return down;
}

export function poolConfig(dir: string, extra: Partial<PoolConfig> = {}): PoolConfig {
  return { name: 'quota-pool', backend: 'dir', dir, defaultVolumeBytes: 64 * MiB, directIo: false, ...extra };
}

let serial = 0;
export function record(capacityBytes: number): VolumeRecord {
  serial += 1;
  return newVolumeRecord({
    id: `vol-${process.pid}-${serial}`, name: `pvc-${serial}`, pool: 'quota-pool', capacityBytes, accessType: 'mount', fsType: '', parameters: {}, ephemeral: false,
  });
}

/** A snapshot record of `source` as the core writes it before the snapshot's storage exists. */
export function snapshotRecord(source: VolumeRecord): SnapshotRecord {
  serial += 1;
  return {
    version: SNAPSHOT_RECORD_VERSION, id: `snap-${process.pid}-${serial}`, name: `snap-${serial}`, pool: source.pool, sourceVolumeId: source.id,
    sizeBytes: source.capacityBytes, chargedBytes: source.capacityBytes, accessType: 'mount', fsType: '', formatted: true, state: 'creating', ...nowWithNanos(),
  };
}

/** What a write that a limit stops returns: how far it got and why it stopped. */
export interface Written {
  bytes: number;
  /** EDQUOT or ENOSPC when a limit stopped it; undefined when it wrote everything. */
  code?: string;
}

/** What differs between the filesystems. */
export interface DirFs {
  fsType: 'btrfs' | 'xfs' | 'ext4';
  /** A fresh filesystem with its quotas on, mounted; returns its mount point. */
  make(t: TestContext): Promise<string>;
  /**
   * The command a workload's write runs under: ext4 lets a writer holding CAP_SYS_RESOURCE
   * (root on the host) past any hard limit, so there it drops it, as a pod's container has.
   */
  writerPrefix: readonly string[];
  /** Makes the filesystem's usage figures current (btrfs counts at each transaction commit). */
  settle(mnt: string): Promise<void>;
  /** Takes the volume's limit away behind the backend's back. */
  dropLimit(b: DirBackend, r: VolumeRecord, mnt: string): Promise<void>;
  /** What a crashed allocate can leave: the directory, nothing held to a size yet. */
  bareDirectory(dir: string): Promise<void>;
  /**
   * A volume directory nobody recorded, held to `bytes`, on project `projectId` where the
   * filesystem has project ids (returned then; undefined otherwise).
   */
  stray(dir: string, mnt: string, bytes: number, projectId: number): Promise<number | undefined>;
}

/** Appends `bytes` to `file` in 1 MiB writes and syncs, as a workload would. */
export async function writeInto(fsx: DirFs, file: string, bytes: number): Promise<Written> {
  const before = await stat(file).then((s) => s.size, () => 0);
  const dd = ['dd', 'if=/dev/zero', `of=${file}`, 'bs=1M', `count=${bytes / MiB}`, 'conv=fsync,notrunc', 'oflag=append'];
  const [command = 'dd', ...args] = [...fsx.writerPrefix, ...dd];
  const r = await cmd(command, args);
  const after = await stat(file).then((s) => s.size, () => 0);
  if (r.code === 0) return { bytes: after - before };
  if (/Disk quota exceeded/.test(r.stderr)) return { bytes: after - before, code: 'EDQUOT' };
  if (/No space left on device/.test(r.stderr)) return { bytes: after - before, code: 'ENOSPC' };
  throw new Error(`dd failed for another reason: ${r.stderr}`);
}

async function exists(p: string): Promise<boolean> {
  return stat(p).then(() => true, () => false);
}

/** Declares the shared tests for one filesystem. */
export function dirBackendTests(fsx: DirFs, skip: string | false = false): void {
  const opened = async (t: TestContext, extra: Partial<PoolConfig> = {}) => {
    const mnt = await fsx.make(t);
    const config = poolConfig(path.join(mnt, 'pool'), extra);
    const b = new DirBackend(config);
    assert.deepEqual(await b.open([]), []);
    return { mnt, b, config };
  };

  test(`${fsx.fsType}: a volume holds its size: a write past it fails, a sibling is untouched, growth is online, usage is the volume's`, { skip }, async (t) => {
    const { mnt, b } = await opened(t);
    assert.equal(b.capabilities.fixedFsType, fsx.fsType);
    assert.equal(b.capabilities.rawBlock, false);
    const one = record(64 * MiB);
    const two = record(64 * MiB);
    for (const r of [one, two]) {
      b.assign(r);
      await b.allocate(r);
      assert.equal(await b.problem(r), undefined);
    }
    if (fsx.fsType !== 'btrfs') assert.notEqual(one.backing?.['projectId'], two.backing?.['projectId'], 'two volumes never share a project id');
    const sibling = path.join(b.directory(two), 'kept');
    await writeFile(sibling, 'the sibling volume\'s data');

    const file = path.join(b.directory(one), 'data');
    const first = await writeInto(fsx, file, 128 * MiB);
    assert.ok(first.code === 'EDQUOT' || first.code === 'ENOSPC', `a write past the 64 MiB limit must fail with EDQUOT or ENOSPC, got ${String(first.code)}`);
    assert.ok(first.bytes <= 64 * MiB && first.bytes >= 56 * MiB, `stopped at ${first.bytes} bytes, expected about 64 MiB`);
    t.diagnostic(`a 128 MiB write into a 64 MiB volume stopped with ${first.code} after ${first.bytes} bytes`);
    assert.equal(await readFile(sibling, 'utf8'), 'the sibling volume\'s data');
    const more = await writeInto(fsx, path.join(b.directory(two), 'more'), 32 * MiB);
    assert.equal(more.code, undefined, 'the sibling volume still takes writes');

    await fsx.settle(mnt);
    const u = await b.usage(one);
    assert.equal(u.totalBytes, 64 * MiB);
    assert.ok(u.usedBytes >= first.bytes - MiB && u.usedBytes <= 64 * MiB + MiB, `used ${u.usedBytes}, written ${first.bytes}`);
    assert.ok(u.availableBytes <= 64 * MiB - u.usedBytes + MiB);

    one.capacityBytes = 128 * MiB;
    await b.grow(one);
    assert.equal(await b.problem(one), undefined);
    const grown = await writeInto(fsx, file, 32 * MiB);
    assert.equal(grown.code, undefined, 'after growing to 128 MiB, 32 MiB more fit');
    await fsx.settle(mnt);
    const g = await b.usage(one);
    assert.equal(g.totalBytes, 128 * MiB);
    assert.ok(g.usedBytes >= first.bytes + 31 * MiB, `used ${g.usedBytes} after the grown write`);
  });

  test(`${fsx.fsType}: problem() names a missing limit and a missing directory; allocate again converges, also after a partial allocate`, { skip }, async (t) => {
    const { mnt, b } = await opened(t);
    const r = record(32 * MiB);
    b.assign(r);
    await b.allocate(r);
    await fsx.dropLimit(b, r, mnt);
    assert.match((await b.problem(r)) ?? '', /no (hard|qgroup) limit/);
    await b.allocate(r);
    assert.equal(await b.problem(r), undefined);

    r.capacityBytes = 48 * MiB; // recorded larger than the limit, as after a crash inside grow
    assert.match((await b.problem(r)) ?? '', /expected 50331648/);
    await b.grow(r);
    assert.equal(await b.problem(r), undefined);

    await sh('rm', ['-rf', b.directory(r)]);
    if (await exists(b.directory(r))) await sh('btrfs', ['subvolume', 'delete', b.directory(r)]);
    assert.match((await b.problem(r)) ?? '', /is missing/);

    const partial = record(32 * MiB);
    b.assign(partial);
    await fsx.bareDirectory(b.directory(partial));
    assert.notEqual(await b.problem(partial), undefined, 'a bare directory is not a volume yet');
    await b.allocate(partial);
    await b.allocate(partial);
    assert.equal(await b.problem(partial), undefined);
    const w = await writeInto(fsx, path.join(b.directory(partial), 'data'), 64 * MiB);
    assert.ok(w.code === 'EDQUOT' || w.code === 'ENOSPC', `the converged volume holds its 32 MiB: ${String(w.code)} at ${w.bytes}`);
  });

  test(`${fsx.fsType}: an unrecorded directory is reported by open, never removed, and its project id never reused; release is idempotent and refuses a mount inside`, { skip }, async (t) => {
    const { mnt, b, config } = await opened(t);
    const kept = record(32 * MiB);
    b.assign(kept);
    await b.allocate(kept);
    await writeFile(path.join(b.directory(kept), 'data'), 'kept');

    const strayDir = path.join(config.dir, 'volumes', 'stray-volume');
    // The id the allocator would hand out next after `kept`'s, had open not learnt it is taken.
    const strayId = await fsx.stray(strayDir, mnt, 32 * MiB, Number(kept.backing?.['projectId'] ?? 0) + 1);
    await writeFile(path.join(strayDir, 'theirs'), 'not Lode\'s');
    // A create the process crashed in right after recording it: nothing on disk shows its id (the
    // one after every id the filesystem knows), yet it is taken.
    const pending = record(32 * MiB);
    b.assign(pending);
    if (strayId !== undefined) pending.backing = { projectId: strayId + 1 };

    const again = new DirBackend(config);
    const unrecorded = await again.open([kept, pending]);
    assert.deepEqual(unrecorded, [{ id: 'stray-volume', location: strayDir, bytes: 32 * MiB }]);
    assert.equal(await readFile(path.join(strayDir, 'theirs'), 'utf8'), 'not Lode\'s');
    assert.equal(await again.problem(kept), undefined);
    if (strayId !== undefined) {
      for (let i = 0; i < 3; i++) {
        const fresh = record(MiB);
        again.assign(fresh);
        assert.notEqual(fresh.backing?.['projectId'], strayId, 'the stray directory\'s project id is never handed out');
        assert.notEqual(fresh.backing?.['projectId'], kept.backing?.['projectId']);
        assert.notEqual(fresh.backing?.['projectId'], pending.backing?.['projectId'], 'an interrupted create\'s recorded id is never shared');
      }
    }

    // Something mounted inside the volume: its deletion would delete through the mount.
    const down = await tmpfsAt(t, path.join(again.directory(kept), 'inner'));
    await writeFile(path.join(again.directory(kept), 'inner', 'other'), 'another filesystem');
    await assert.rejects(again.release(kept), /still mounted/);
    assert.equal(await readFile(path.join(again.directory(kept), 'data'), 'utf8'), 'kept', 'nothing was removed');
    await down();

    // Released by a backend that was never opened, as the core does at start-up.
    const cold = new DirBackend(config);
    await cold.release(kept);
    assert.equal(await exists(again.directory(kept)), false);
    await cold.release(kept);
    await again.release(kept);
    assert.equal(await readFile(path.join(strayDir, 'theirs'), 'utf8'), 'not Lode\'s', 'the unrecorded directory is still there');
  });

  test(`${fsx.fsType}: snapshots: the data as it was, restored and cloned into volumes held to their own size; what an interrupted attempt left is replaced; open reports a snapshot directory with no record and never removes it`, { skip }, async (t) => {
    const { b, config } = await opened(t);
    const src = record(32 * MiB);
    b.assign(src);
    await b.allocate(src);
    const data = path.join(b.directory(src), 'data');
    await writeFile(data, 'first');
    await mkdir(path.join(b.directory(src), 'sub'));
    await writeFile(path.join(b.directory(src), 'sub', 'deep'), 'deep');

    const snap = snapshotRecord(src);
    // What an attempt killed mid-copy leaves: a partial tree under the recorded snapshot's name
    // (on btrfs the only thing one can leave is a subvolume: a snapshot is made whole or not at all).
    await fsx.bareDirectory(path.join(config.dir, 'snapshots', snap.id));
    await writeFile(path.join(config.dir, 'snapshots', snap.id, 'partial'), 'from a crashed attempt');
    const held = await b.snapshots.takeSnapshot(src, snap);
    assert.ok(held > 0 && held <= src.capacityBytes, `a snapshot holds what its copy takes: ${held}`);
    assert.equal(await b.snapshots.snapshotProblem(snap), undefined);
    // What docs/backends.md says each filesystem does: mkfs.xfs makes reflink filesystems by default, ext4 has none.
    const expected = { btrfs: /read-only btrfs snapshot/, xfs: /reflink copy/, ext4: /full copy/ }[fsx.fsType];
    assert.match(b.snapshots.method(), expected);
    assert.equal(b.snapshots.consistentCopy(), fsx.fsType === 'btrfs', 'only a btrfs snapshot is a point in time');
    const snapDir = path.join(config.dir, 'snapshots', snap.id);
    assert.equal(await exists(path.join(snapDir, 'partial')), false, 'the partial copy was replaced');
    await writeFile(data, 'second');

    // A restore twice the size, over what an interrupted fill left.
    const restored = record(64 * MiB);
    b.assign(restored);
    await fsx.bareDirectory(b.directory(restored));
    await writeFile(path.join(b.directory(restored), 'partial'), 'from a crashed fill');
    await b.snapshots.fill(restored, { snapshot: snap });
    assert.equal(await readFile(path.join(b.directory(restored), 'data'), 'utf8'), 'first', 'the restore holds the data as it was');
    assert.equal(await readFile(path.join(b.directory(restored), 'sub', 'deep'), 'utf8'), 'deep');
    assert.equal(await exists(path.join(b.directory(restored), 'partial')), false, 'the partial fill was replaced');
    assert.equal(await b.problem(restored), undefined, 'the restore is held to its own size');
    const w = await writeInto(fsx, path.join(b.directory(restored), 'more'), 96 * MiB);
    assert.ok(w.code !== undefined && w.bytes > 32 * MiB && w.bytes <= 64 * MiB, `the restore takes up to its 64 MiB, not its source's 32: ${String(w.code)} at ${w.bytes}`);

    const clone = record(32 * MiB);
    b.assign(clone);
    await b.snapshots.fill(clone, { volume: src });
    assert.equal(await readFile(path.join(b.directory(clone), 'data'), 'utf8'), 'second', 'the clone holds the source as it is');
    assert.equal(await b.problem(clone), undefined);
    assert.equal(await readFile(path.join(snapDir, 'data'), 'utf8'), 'first', 'the snapshot is untouched by writes to its source');

    // A snapshot directory nobody recorded: reported with its size, kept; the recorded one is not reported.
    const strayDir = path.join(config.dir, 'snapshots', 'stray-snapshot');
    await mkdir(strayDir);
    await writeFile(path.join(strayDir, 'theirs'), 'x'.repeat(64 * 1024));
    const again = new DirBackend(config);
    const unrecorded = await again.open([src, restored, clone], [{ ...snap, state: 'ready' }]);
    assert.deepEqual(unrecorded.map((u) => [u.id, u.location]), [['stray-snapshot', strayDir]], 'only the unrecorded snapshot directory is reported');
    assert.ok((unrecorded[0]?.bytes ?? 0) >= 64 * 1024, `it is reported with what it takes: ${unrecorded[0]?.bytes}`);

    // Released by a backend never opened, as the core rolls back a crashed snapshot at start-up; twice.
    const cold = new DirBackend(config);
    await cold.snapshots.releaseSnapshot(snap);
    await cold.snapshots.releaseSnapshot(snap);
    assert.equal(await exists(snapDir), false);
    assert.match(await again.snapshots.snapshotProblem(snap) ?? '', /missing/);
    assert.equal(await readFile(path.join(strayDir, 'theirs'), 'utf8'), 'x'.repeat(64 * 1024), 'the unrecorded snapshot is still there');
    for (const r of [src, restored, clone]) await again.release(r);
  });

  test(`${fsx.fsType}: a bind mount of a volume directory is the pool's; the pool filesystem's own mount is not`, { skip }, async (t) => {
    const { mnt, b } = await opened(t);
    const r = record(16 * MiB);
    b.assign(r);
    await b.allocate(r);
    const target = await mkdtemp(path.join(os.tmpdir(), 'lode-dirbind-'));
    await sh('mount', ['--bind', b.directory(r), target]);
    t.after(async () => {
      await sh('umount', [target]);
      await rm(target, { recursive: true, force: true });
    });
    const table = await readMountTable();
    const bind = table.find((m) => m.mountPoint === target);
    const own = table.find((m) => m.mountPoint === mnt);
    assert.ok(bind && own);
    assert.equal(await b.holdsMount(bind), true);
    assert.equal(await b.holdsMount(own), false);
    await assert.rejects(b.release(r), /still mounted \(at /, 'a volume still bind-mounted elsewhere is not deleted');
  });

  test(`${fsx.fsType}: available space never exceeds what the filesystem can still give, beside the volumes' unused limits`, { skip }, async (t) => {
    const { mnt, b } = await opened(t);
    const r = record(128 * MiB);
    b.assign(r);
    await b.allocate(r);
    await b.refresh();
    const before = b.stats(r.capacityBytes, 1, 0);
    assert.ok(before.availableBytes <= before.capacityBytes - r.capacityBytes);
    // Someone else fills the shared filesystem outside the pool.
    const other = path.join(mnt, 'not-the-pool');
    await mkdir(other);
    await sh('dd', ['if=/dev/zero', `of=${path.join(other, 'fill')}`, 'bs=1M', 'count=200', 'conv=fsync']);
    await fsx.settle(mnt);
    await b.refresh();
    const s = await statfs(mnt);
    const free = s.bavail * s.bsize;
    const after = b.stats(r.capacityBytes, 1, 0);
    assert.equal(after.backend, 'dir');
    assert.equal(after.dataPath, 'native');
    assert.ok(after.availableBytes <= free - 120 * MiB, `available ${after.availableBytes} must leave the volume's unused 128 MiB out of the ${free} free`);
    assert.ok(after.availableBytes < before.availableBytes - 150 * MiB, 'the outside write shows in what is available');
  });
}
