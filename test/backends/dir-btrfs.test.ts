// The `dir` backend on this host's own kernel: btrfs subvolumes with qgroup limits, and the refusal of filesystems that cannot hold a directory to a size.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, rm, stat, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { DirBackend } from '../../src/backends/dir/dir-backend.js';
import { createSubvolume, setQgroupLimit } from '../../src/sys/btrfs.js';
import { toolRunCount } from '../../src/sys/exec.js';
import { dirBackendTests, MiB, poolConfig, record, scratchFilesystem, sh, snapshotRecord, type DirFs } from './dir-scenarios.js';

const btrfs: DirFs = {
  fsType: 'btrfs',
  async make(t) {
    const mnt = await scratchFilesystem(t, 1024, ['mkfs.btrfs', '-q']);
    await sh('btrfs', ['quota', 'enable', mnt]);
    return mnt;
  },
  writerPrefix: [], // btrfs holds root to a qgroup limit as well
  async settle(mnt) {
    await sh('btrfs', ['filesystem', 'sync', mnt]);
  },
  async dropLimit(b, r) {
    await setQgroupLimit(b.directory(r), undefined);
  },
  async bareDirectory(dir) {
    await createSubvolume(dir);
  },
  async stray(dir, _mnt, bytes) {
    await createSubvolume(dir);
    await setQgroupLimit(dir, bytes);
    return undefined;
  },
};

dirBackendTests(btrfs);

test('btrfs with quotas disabled: open refuses the pool and says how to enable them', async (t) => {
  const mnt = await scratchFilesystem(t, 1024, ['mkfs.btrfs', '-q']);
  const b = new DirBackend(poolConfig(path.join(mnt, 'pool')));
  await assert.rejects(b.open([]), (err: Error) => {
    assert.match(err.message, /^pool quota-pool: /);
    assert.ok(err.message.includes(`btrfs quota enable ${mnt}`), err.message);
    return true;
  });
  assert.equal(b.capabilities.fixedFsType, undefined, 'no filesystem type before a successful open');
});

test('XFS mounted without prjquota: open refuses the pool and names the mount option', async (t) => {
  // mkfs.xfs refuses filesystems under 300 MB; the image is sparse.
  const mnt = await scratchFilesystem(t, 512, ['mkfs.xfs', '-q']);
  const b = new DirBackend(poolConfig(path.join(mnt, 'pool')));
  await assert.rejects(b.open([]), (err: Error) => {
    assert.match(err.message, /^pool quota-pool: XFS at /);
    assert.match(err.message, /mount -o prjquota \/dev\/loop\d+ /);
    assert.match(err.message, /fstab/);
    return true;
  });
});

test('ext4 without the project quota feature: open refuses the pool and says how to turn it on', async (t) => {
  const mnt = await scratchFilesystem(t, 256, ['mkfs.ext4', '-q']);
  const b = new DirBackend(poolConfig(path.join(mnt, 'pool')));
  await assert.rejects(b.open([]), (err: Error) => {
    assert.match(err.message, /^pool quota-pool: ext4 at /);
    assert.match(err.message, /tune2fs -O project,quota \/dev\/loop\d+/);
    assert.match(err.message, /mount -o prjquota/);
    return true;
  });
});

test('a filesystem with no per-directory limits at all (tmpfs) is refused with what the backend needs', async (t) => {
  const { mkdtemp, rm } = await import('node:fs/promises');
  const os = await import('node:os');
  const dir = await mkdtemp(path.join(os.tmpdir(), 'lode-dirtmpfs-'));
  await sh('mount', ['-t', 'tmpfs', 'tmpfs', dir]);
  t.after(async () => {
    await sh('umount', [dir]);
    await rm(dir, { recursive: true, force: true });
  });
  const b = new DirBackend(poolConfig(path.join(dir, 'pool')));
  await assert.rejects(b.open([]), /^Error: pool quota-pool: .* is on tmpfs .*needs XFS mounted with prjquota/);
});

test('btrfs: release deletes subvolumes a volume\'s user nested inside it, which the kernel would not delete with it', async (t) => {
  const mnt = await btrfs.make(t);
  const config = poolConfig(path.join(mnt, 'pool'));
  const b = new DirBackend(config);
  await b.open([]);
  const r = record(64 * MiB);
  b.assign(r);
  await b.allocate(r);
  await createSubvolume(path.join(b.directory(r), 'nested'));
  await mkdir(path.join(b.directory(r), 'deeper'));
  await createSubvolume(path.join(b.directory(r), 'deeper', 'inner'));
  await createSubvolume(path.join(b.directory(r), 'deeper', 'inner', 'innermost'));
  await writeFile(path.join(b.directory(r), 'deeper', 'inner', 'innermost', 'data'), 'x');
  await b.release(r);
  await assert.rejects(stat(b.directory(r)), /ENOENT/);
  assert.equal((await sh('btrfs', ['subvolume', 'list', mnt])).trim(), '', 'no subvolume is left');
});

test('btrfs: healthProblem() is none while quotas are on and names the fix once they are turned off under a running pool', async (t) => {
  const mnt = await btrfs.make(t);
  // Answers no older than 0 ms: every full refresh (the driver's capacity timer) starts the
  // next quota check, so a call after it sees the change.
  const b = new DirBackend(poolConfig(path.join(mnt, 'pool')), 0);
  await b.open([]);
  assert.equal(await b.healthProblem(), undefined);
  await sh('btrfs', ['quota', 'disable', mnt]);
  // A bound on the background check, not a speed check. A check that ran across the disable
  // may have seen btrfs half-way and said something else; the one after it names the fix.
  const fix = new RegExp(`^pool quota-pool: .*btrfs quota enable ${mnt}`);
  const seen: string[] = [];
  for (let i = 0; i < 200 && !fix.test(seen.at(-1) ?? ''); i++) {
    if (i > 0) await new Promise((r) => setTimeout(r, 50));
    await b.refresh();
    const problem = await b.healthProblem();
    if (problem !== undefined && problem !== seen.at(-1)) seen.push(problem);
  }
  assert.match(seen.at(-1) ?? '', fix, `answers seen: ${JSON.stringify(seen)}`);
});

test('btrfs: healthProblem() answers from the last quota check while it is fresh, running no tool', async (t) => {
  const mnt = await btrfs.make(t);
  const b = new DirBackend(poolConfig(path.join(mnt, 'pool')), 3_600_000);
  await b.open([]);
  await sh('btrfs', ['quota', 'disable', mnt]);
  assert.equal(await b.healthProblem(), undefined, 'the check at open is the answer for the next hour');
  await rm(path.join(mnt, 'pool', 'volumes'), { recursive: true });
  assert.match((await b.healthProblem()) ?? '', /^pool quota-pool: .*volumes/, 'but the volumes directory is looked at on every call');
});

test('btrfs: healthProblem() (Probe) runs no tool however old its answer; the pool\'s full refresh runs the check, in the background', async (t) => {
  const mnt = await btrfs.make(t);
  // The backend's clock is the test's: the answer of the check at open is fresh through open's
  // own refresh (so no check of open's is still running when quotas go off below), then an hour
  // old: before, each call past the age started a quota check itself.
  let now = 0;
  const b = new DirBackend(poolConfig(path.join(mnt, 'pool')), 60_000, () => now);
  await b.open([]);
  await sh('btrfs', ['quota', 'disable', mnt]);
  now += 3_600_000;
  const before = toolRunCount();
  for (let i = 0; i < 20; i++) {
    assert.equal(await b.healthProblem(), undefined, 'the answer of the check at open');
    await new Promise((r) => setImmediate(r)); // room for a check a call started in the background
  }
  assert.equal(toolRunCount(), before, 'no tool ran for 20 health answers');
  await b.refresh();
  assert.equal(toolRunCount(), before + 1, 'a full refresh started the quota check (no volumes: no survey)');
  for (let i = 0; i < 200 && (await b.healthProblem()) === undefined; i++) await new Promise((r) => setTimeout(r, 50));
  assert.match((await b.healthProblem()) ?? '', new RegExp(`btrfs quota enable ${mnt}`), 'and its answer is the next one given');
});

test('btrfs: the lifecycle runs only the tools it needs: no survey after the pool\'s own writes, one query to check a volume before staging, one tool to delete it', async (t) => {
  const mnt = await btrfs.make(t);
  const b = new DirBackend(poolConfig(path.join(mnt, 'pool')));
  await b.open([]);
  const r = record(64 * MiB);
  b.assign(r);
  await b.allocate(r);
  let n = toolRunCount();
  await b.refresh('free-space');
  assert.equal(toolRunCount() - n, 0, 'after a create of its own the pool reads statfs only (no subvolume list, no qgroup show)');
  const s = b.stats(64 * MiB, 1, 0);
  assert.ok(s.availableBytes <= s.capacityBytes - 64 * MiB, 'the new volume\'s limit counts as taken without a survey');
  n = toolRunCount();
  assert.equal(await b.problem(r), undefined);
  assert.equal(toolRunCount() - n, 1, 'the check before staging is one qgroup query (no rootid lookup first)');
  await setQgroupLimit(b.directory(r), 32 * MiB);
  assert.match((await b.problem(r)) ?? '', /qgroup limit of 33554432 bytes, expected 67108864/, 'and it still reads the limit btrfs holds, not a remembered one');
  await setQgroupLimit(b.directory(r), 64 * MiB);
  n = toolRunCount();
  await b.refresh();
  assert.ok(toolRunCount() - n >= 2, 'a full refresh still surveys (subvolume list and qgroup show)');
  n = toolRunCount();
  await b.release(r);
  assert.equal(toolRunCount() - n, 1, 'a delete of a volume with nothing nested is one subvolume delete (full qgroups: no group to look for)');
  await assert.rejects(stat(b.directory(r)), /ENOENT/);
});

test('btrfs snapshots: a volume\'s extents shared with its snapshot count as still to be written, so what is available drops by them', async (t) => {
  const mnt = await btrfs.make(t);
  const b = new DirBackend(poolConfig(path.join(mnt, 'pool')));
  assert.deepEqual(await b.open([]), []);
  const r = record(128 * MiB);
  b.assign(r);
  await b.allocate(r);
  await sh('dd', ['if=/dev/urandom', `of=${path.join(b.directory(r), 'data')}`, 'bs=1M', 'count=64', 'conv=fsync', 'status=none']);
  await btrfs.settle(mnt);
  await b.refresh();
  // No allocation passed in: only the physical bound (free space less unwritten limits) is left.
  const before = b.stats(0, 1, 0).availableBytes;
  const snap = snapshotRecord(r);
  const held = await b.snapshots.takeSnapshot(r, snap);
  assert.ok(held >= 64 * MiB && held < 65 * MiB, `the snapshot holds what the volume used: ${held}`);
  await btrfs.settle(mnt);
  await b.refresh();
  const after = b.stats(0, 1, 0).availableBytes;
  // The snapshot takes no new extent, but the volume may now rewrite all 64 MiB into new ones.
  assert.ok(before - after >= 63 * MiB, `available fell by ${before - after} bytes, expected the 64 MiB the volume shares`);
  await b.snapshots.releaseSnapshot(snap);
  await b.release(r);
});
