// Unsized pools on a filesystem others write to: the reserve they leave free, and capacity that follows other writers on GetCapacity and on a timer.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { run } from '../../src/sys/exec.js';
import { METRIC_NAMES } from '../../src/metrics/driver-metrics.js';
import { DriverHarness } from '../helpers/driver-harness.js';
import { scratchFilesystem } from '../backends/dir-scenarios.js';
import { sampleValue, parseExposition } from '../metrics/prom-text.js';
import { createVolume, expectCode, fsCap, httpGet, metricsPort, MiB, status, volumeRequest } from './support.js';

// A small ext4 filesystem of the test's own, so every figure is exact and the host's disk is never filled.
const FS_BYTES = 256 * MiB;
let work: string;
let mnt: string;
let device: string;
before(async () => {
  work = await fs.mkdtemp(path.join(os.tmpdir(), 'lode-disk-'));
  const image = path.join(work, 'disk.img');
  await run('truncate', ['-s', String(FS_BYTES), image]);
  // No reserved blocks: what statfs calls available is then all that is free.
  await run('mkfs.ext4', ['-F', '-q', '-m', '0', image]);
  device = (await run('losetup', ['--find', '--show', image])).stdout.trim();
  mnt = path.join(work, 'mnt');
  await fs.mkdir(mnt);
  await run('mount', [device, mnt]);
  for (const d of ['a', 'b', 'c', 'd']) await fs.mkdir(path.join(mnt, d));
});
after(async () => {
  if (mnt) await run('umount', [mnt]).catch(() => undefined);
  if (device) await run('losetup', ['-d', device]).catch(() => undefined);
  if (work) await fs.rm(work, { recursive: true, force: true });
});

/** What a pool with `reserveBytes` may still hand out on the test filesystem right now. */
async function expectedAvailable(reserveBytes: (total: number) => number): Promise<number> {
  const s = await fs.statfs(mnt);
  return Math.max(0, s.bavail * s.bsize - reserveBytes(s.blocks * s.bsize));
}
const tenPercent = (total: number) => Math.ceil(total * 0.1);
const flat32Mi = () => 32 * MiB;

async function available(h: DriverHarness, pool: string): Promise<number> {
  return Number((await h.client.getCapacity({ parameters: { pool } })).available_capacity);
}

/** Writes `bytes` of real data outside Lode, flushed so the filesystem counts it. */
async function writeOutside(name: string, bytes: number): Promise<string> {
  const file = path.join(mnt, name);
  await run('dd', ['if=/dev/zero', `of=${file}`, 'bs=1M', `count=${bytes / MiB}`, 'conv=fsync', 'status=none']);
  return file;
}

test('an unsized pool offers its filesystem\'s free space minus its reserve, and GetCapacity follows other writers', async (t) => {
  const h = await DriverHarness.start({
    pools: [
      { name: 'pct', dir: path.join(mnt, 'a'), extra: 'reserve=10%' },
      { name: 'flat', dir: path.join(mnt, 'b'), extra: 'reserve=32Mi' },
    ],
  });
  t.after(() => h.cleanup());
  assert.equal(await available(h, 'pct'), await expectedAvailable(tenPercent));
  assert.equal(await available(h, 'flat'), await expectedAvailable(flat32Mi));
  const before = await available(h, 'pct');

  // Another writer takes 64 MiB of the disk: no create, no delete, yet capacity drops.
  const big = await writeOutside('other-user.bin', 64 * MiB);
  const after64 = await available(h, 'pct');
  assert.equal(after64, await expectedAvailable(tenPercent));
  assert.ok(before - after64 >= 64 * MiB, `capacity fell by ${(before - after64) / MiB} MiB for a 64 MiB file`);
  assert.equal(await available(h, 'flat'), await expectedAvailable(flat32Mi));

  // A volume takes capacity as before: what stays free is still the reserve at least.
  const v = await createVolume(h, 'follows', 32 * MiB);
  assert.equal(await available(h, 'pct'), await expectedAvailable(tenPercent));
  const s = await fs.statfs(mnt);
  assert.ok(s.bavail * s.bsize >= tenPercent(s.blocks * s.bsize), 'the volume left the reserve free');

  // The other writer fills the disk into the reserve: nothing is offered, nothing is made.
  const free = (await fs.statfs(mnt)).bavail * (await fs.statfs(mnt)).bsize;
  const fill = await writeOutside('filler.bin', Math.floor((free - 16 * MiB) / MiB) * MiB);
  assert.equal(await available(h, 'pct'), 0);
  assert.equal(await available(h, 'flat'), 0);
  const res = await h.client.getCapacity({ parameters: { pool: 'pct' } });
  assert.equal(res.maximum_volume_size?.value, '0', 'no request may look as if it fits');
  await expectCode(h.client.createVolume(volumeRequest('into-reserve', 16 * MiB, { parameters: { pool: 'pct' } })), status.RESOURCE_EXHAUSTED, 'a volume that would eat the reserve');

  // The writer frees its space: capacity comes back, again without a create or delete.
  await fs.rm(fill);
  await fs.rm(big);
  await run('sync', []);
  assert.equal(await available(h, 'pct'), await expectedAvailable(tenPercent));
  assert.ok(await available(h, 'pct') > after64);
  await h.client.deleteVolume({ volume_id: v.id });
  assert.equal(await available(h, 'pct'), await expectedAvailable(tenPercent));
});

async function scrapeAvailable(port: number, pool: string): Promise<number> {
  const { body } = await httpGet(port, '/metrics');
  return sampleValue(parseExposition(body), METRIC_NAMES.poolAvailable, { pool, backend: 'loop' });
}

test('metrics follow other writers too: the timer re-reads free space with no CSI call at all', async (t) => {
  const h = await DriverHarness.start({
    pools: [{ name: 'timed', dir: path.join(mnt, 'c'), extra: 'reserve=10%' }],
    extraArgs: ['--metrics-address', '127.0.0.1:0', '--capacity-refresh', '1'],
  });
  t.after(() => h.cleanup());
  const port = await metricsPort(h);
  const start = await scrapeAvailable(port, 'timed');
  assert.equal(start, await expectedAvailable(tenPercent));
  const file = await writeOutside('timer.bin', 48 * MiB);
  const want = await expectedAvailable(tenPercent);
  // Wait for the figure, not for a time: a driver without the timer never gets there.
  let seen = start;
  for (let i = 0; i < 200 && seen !== want; i++) {
    await new Promise((r) => setTimeout(r, 100));
    seen = await scrapeAvailable(port, 'timed');
  }
  assert.equal(seen, want, `the metric stayed at ${seen} (start ${start})`);
  await fs.rm(file);
});

test('a create is never refused for space on an old figure: the pool is read again before a refusal', async (t) => {
  const h = await DriverHarness.start({ pools: [{ name: 'stale', dir: path.join(mnt, 'd'), extra: 'reserve=10%' }] });
  t.after(() => h.cleanup());
  const file = await writeOutside('for-a-while.bin', 128 * MiB);
  const low = await available(h, 'stale');
  assert.equal(low, await expectedAvailable(tenPercent), 'GetCapacity has read the disk with the file on it');
  // The other writer frees its space; no CSI call tells the driver, and its timer is minutes away.
  await fs.rm(file);
  await run('sync', []);
  const fresh = await expectedAvailable(tenPercent);
  const size = Math.floor((low + (fresh - low) / 2) / MiB) * MiB;
  assert.ok(size > low && size < fresh, `a size (${size / MiB} MiB) between the old figure (${low / MiB} MiB) and the disk's (${fresh / MiB} MiB)`);
  const v = await createVolume(h, 'fits-now', size, { parameters: { pool: 'stale' } });
  assert.equal(await available(h, 'stale'), await expectedAvailable(tenPercent));
  // Read again, a create that really does not fit is still refused.
  await expectCode(h.client.createVolume(volumeRequest('too-big', fresh, { parameters: { pool: 'stale' } })), status.RESOURCE_EXHAUSTED, 'a volume larger than what is free');
  await h.client.deleteVolume({ volume_id: v.id });
});

test('a dir pool on btrfs: a create is not refused for a figure read before others deleted files, and the re-read finds the space', async (t) => {
  const disk = await scratchFilesystem(t, 1024, ['mkfs.btrfs', '-q']);
  await run('btrfs', ['quota', 'enable', disk]);
  await fs.mkdir(path.join(disk, 'pool'));
  const h = await DriverHarness.start({ pools: [{ name: 'dirstale', dir: path.join(disk, 'pool'), extra: 'backend=dir,reserve=32Mi' }] });
  t.after(() => h.cleanup());
  // Another user of the disk writes a file; a create (whose own refresh reads the disk) and
  // GetCapacity see the disk with it.
  const file = path.join(disk, 'theirs.bin');
  await run('dd', ['if=/dev/zero', `of=${file}`, 'bs=1M', 'count=300', 'conv=fsync', 'status=none']);
  await run('btrfs', ['filesystem', 'sync', disk]);
  const opts = { cap: fsCap(''), parameters: { pool: 'dirstale' } };
  const first = await createVolume(h, 'while-theirs', 16 * MiB, opts);
  const low = await available(h, 'dirstale');
  const size = low + 150 * MiB;
  await expectCode(h.client.createVolume(volumeRequest('not-yet', size, opts)), status.RESOURCE_EXHAUSTED, 'more than is free while their file is there');
  // They delete it (committed, so statfs shows it free); no CSI call tells the driver.
  await fs.rm(file);
  await run('btrfs', ['filesystem', 'sync', disk]);
  const v = await createVolume(h, 'fits-now', size, opts);
  assert.ok(v.capacity >= size, `the volume has the ${size} bytes asked for`);
  await h.client.deleteVolume({ volume_id: v.id });
  await h.client.deleteVolume({ volume_id: first.id });
});
