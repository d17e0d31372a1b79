// lvm pools against the figures LVM itself reports: thick and thin capacity and maximum sizes, a VG shared with others, thin pool fullness, LVs Lode must not touch, and read-only raw block.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { LV_PREFIX, poolTag } from '../../src/backends/lvm/lvm-backend.js';
import { METRIC_NAMES } from '../../src/metrics/driver-metrics.js';
import { createVolume, expectCode, fsCap, httpGet, metricsPort, rawCap, readAt, stageAndPublish, status, teardown, volumeRequest, writeAtSynced, writeRefusal } from '../driver/support.js';
import { DriverHarness } from '../helpers/driver-harness.js';
import { listLoopDevices } from '../../src/sys/loop.js';
import { findSamples, parseExposition } from '../metrics/prom-text.js';
import { lvmMedium, lvmTool, THIN_POOL, type LvmMediumOptions } from './lvm-fixtures.js';
import { guestOnly } from './support.js';
import { startOnMedium, writeUpTo } from '../conformance/checks.js';

const MiB = 2 ** 20;
const POOL = 'lv';
const EXT4 = fsCap('ext4');

interface Row { [field: string]: string }

async function report(command: 'vgs' | 'lvs', fields: string, target: string): Promise<Row[]> {
  const { stdout } = await lvmTool(command, ['--reportformat', 'json', '--units', 'b', '--nosuffix', '-o', fields, target]);
  const parsed = JSON.parse(stdout) as { report: Array<Record<string, Row[]>> };
  return parsed.report[0]?.[command === 'vgs' ? 'vg' : 'lv'] ?? [];
}

async function start(t: TestContext, o: LvmMediumOptions, extraArgs: string[] = []): Promise<{ h: DriverHarness; vg: string }> {
  const medium = await lvmMedium(o);
  return { h: await startOnMedium(t, medium, { nodeId: 'node-lvm', pool: POOL, extraArgs }), vg: medium.vg };
}

async function capacity(h: DriverHarness): Promise<{ available: number; maximum: number }> {
  const res = await h.client.getCapacity({ parameters: { pool: POOL } });
  return { available: Number(res.available_capacity), maximum: Number(res.maximum_volume_size?.value) };
}

const wholeExtents = (bytes: number, extent: number) => Math.max(0, Math.floor(bytes / extent) * extent);

test('thick: capacity is the VG\'s free extents less the reserve, exactly; a volume of the maximum fits, one extent more does not; others\' use of the VG counts', { skip: guestOnly }, async (t) => {
  const { h, vg } = await start(t, { imageMiB: 512, extra: 'reserve=10Mi' });
  const expected = async () => {
    const [row] = await report('vgs', 'vg_free,vg_extent_size', vg);
    return wholeExtents(Number(row?.vg_free) - 10 * MiB, Number(row?.vg_extent_size));
  };
  const extent = Number((await report('vgs', 'vg_extent_size', vg))[0]?.vg_extent_size);
  const first = await capacity(h);
  assert.equal(first.available, await expected(), 'available = vg_free - reserve, in whole extents');
  assert.equal(first.maximum, first.available, 'the largest LV the free extents allow');

  // Another user of the VG takes 64 MiB: Lode's figure follows at once.
  await lvmTool('lvcreate', ['-q', '-y', '-L', '64m', '-n', 'someone-else', vg]);
  const shared = await capacity(h);
  assert.equal(shared.available, first.available - 64 * MiB);
  assert.equal(shared.available, await expected());

  const v = await createVolume(h, 'thick-max', shared.maximum, { cap: EXT4 });
  assert.equal(v.capacity, shared.maximum, 'a volume of exactly the maximum is made at that size');
  const [lv] = await report('lvs', 'lv_name,lv_size,lv_tags', `${vg}/${LV_PREFIX}${v.id}`);
  assert.equal(Number(lv?.lv_size), shared.maximum);
  assert.ok(lv?.lv_tags.split(',').includes(poolTag(POOL)), `the LV carries the pool's tag: ${lv?.lv_tags}`);
  assert.deepEqual(await capacity(h), { available: 0, maximum: 0 });
  await expectCode(h.client.createVolume(volumeRequest('thick-one-more', extent, { cap: EXT4 })), status.RESOURCE_EXHAUSTED, 'one extent more');

  await h.client.deleteVolume({ volume_id: v.id });
  assert.equal((await capacity(h)).available, shared.available, 'the space comes back');
  assert.deepEqual((await report('lvs', 'lv_name', vg)).map((r) => r.lv_name), ['someone-else'], 'the other user\'s LV is untouched');
});

test('thin: available is the smaller of the thin pool\'s free data and pool x ratio - virtual sizes, against lvs, as data is written; fullness is a metric and a volume condition', { skip: guestOnly }, async (t) => {
  const { h, vg } = await start(t, { imageMiB: 512, thinPoolMiB: 256, extra: 'overprovision=2,thin-alert=20' }, ['--metrics-address', '127.0.0.1:0']);
  await lvmTool('lvcreate', ['-q', '-y', '-V', '128m', '--thinpool', THIN_POOL, '-n', 'someone-else', vg]);
  const extent = Number((await report('vgs', 'vg_extent_size', vg))[0]?.vg_extent_size);
  const expected = async (ledger: number) => {
    const rows = await report('lvs', 'lv_name,lv_size,pool_lv,data_percent,lv_tags', vg);
    const pool = rows.find((r) => r.lv_name === THIN_POOL);
    const size = Number(pool?.lv_size);
    const dataFree = wholeExtents(size - Math.ceil((size * Number(pool?.data_percent)) / 100), extent);
    const foreign = rows.filter((r) => r.pool_lv === THIN_POOL && !r.lv_tags.split(',').includes(poolTag(POOL))).reduce((s, r) => s + Number(r.lv_size), 0);
    const budget = wholeExtents(size * 2 - foreign, extent) - ledger;
    return { available: Math.max(0, Math.min(dataFree, budget)), dataFree, budget, dataPercent: Number(pool?.data_percent) };
  };

  const empty = await expected(0);
  assert.equal((await capacity(h)).available, empty.available, `thin rule before any volume: ${JSON.stringify(empty)}`);

  // With the other user's 128 MiB, 328 MiB virtual in a 256 MiB thin pool: overprovisioned, and
  // the budget (512 - 128 - 200 = 184 MiB) is below the free data: it binds.
  const v = await createVolume(h, 'thin-a', 200 * MiB, { cap: EXT4 });
  const promised = await expected(v.capacity);
  assert.ok(promised.budget < promised.dataFree, `the budget binds: ${JSON.stringify(promised)}`);
  assert.equal((await capacity(h)).available, promised.available);
  await expectCode(h.client.createVolume(volumeRequest('thin-over-budget', promised.budget + extent, { cap: EXT4 })), status.RESOURCE_EXHAUSTED, 'past the overprovision budget');

  const { target } = await stageAndPublish(h, v.id, 'thin-a', EXT4);
  const healthy = await h.client.nodeGetVolumeStats({ volume_id: v.id, volume_path: target });
  assert.equal(healthy.volume_condition?.abnormal, false, `normal below the alert level: ${healthy.volume_condition?.message}`);
  // Written data (fsynced, so the thin pool has allocated it) fills the thin pool itself: now the data binds.
  assert.equal((await writeUpTo(path.join(target, 'fill'), 120 * MiB)).code, undefined);
  const written = await expected(v.capacity);
  assert.ok(written.dataFree < written.budget, `the data binds: ${JSON.stringify(written)}`);
  // ext4 keeps writing in the background (its lazy inode-table init), so the thin pool can fill
  // by a hair between two reads: the driver's figure must be the rule applied to lvs as it stood
  // at some moment between the test's reading before and after it.
  const answered = (await capacity(h)).available;
  const later = await expected(v.capacity);
  assert.ok(answered <= written.available && answered >= later.available,
    `available follows lvs as data is written: ${answered}, lvs before ${written.available}, after ${later.available}`);

  const sick = await h.client.nodeGetVolumeStats({ volume_id: v.id, volume_path: target });
  assert.equal(sick.volume_condition?.abnormal, true, `a thin pool ${written.dataPercent}% full is past thin-alert=20`);
  assert.match(sick.volume_condition?.message ?? '', new RegExp(`thin pool ${vg}/${THIN_POOL} is [0-9.]+% full \\(data\\)`));
  const scrape = parseExposition((await httpGet(await metricsPort(h), '/metrics')).body);
  const [data] = findSamples(scrape, METRIC_NAMES.thinDataUsed, { pool: POOL });
  // The gauge is the driver's last refresh, made after the test's first reading; the thin pool
  // keeps filling behind ext4's background writes, so it lies between that reading and one taken now.
  const now = await expected(v.capacity);
  assert.ok(data !== undefined && data.value >= written.dataPercent / 100 - 0.005 && data.value <= now.dataPercent / 100 + 0.005,
    `data fullness metric ${data?.value} against lvs ${written.dataPercent}% before and ${now.dataPercent}% after`);
  assert.equal(findSamples(scrape, METRIC_NAMES.thinMetadataUsed, { pool: POOL }).length, 1);

  await teardown(h, v.id, 'thin-a');
  assert.equal((await capacity(h)).available, (await expected(0)).available, 'deleting the volume frees its data and its budget');
  assert.deepEqual((await report('lvs', 'lv_name', vg)).map((r) => r.lv_name).sort(), ['someone-else', THIN_POOL].sort());
});

test('LVs that are not provably Lode\'s are never touched: a name clash fails the create, a tagged LV with no record is quarantined and kept', { skip: guestOnly }, async (t) => {
  const { h, vg } = await start(t, { imageMiB: 256 });
  const name = 'pvc-clash';
  // The id Lode gives the claim's volume, learnt by making and deleting it once.
  const id = (await h.client.createVolume(volumeRequest(name, 16 * MiB, { cap: EXT4 }))).volume?.volume_id ?? '';
  await h.client.deleteVolume({ volume_id: id });
  // Someone else's LV that happens to have the name Lode would give the claim's volume: no tag.
  const clash = `${LV_PREFIX}${id}`;
  await lvmTool('lvcreate', ['-q', '-y', '-L', '16m', '-n', clash, vg]);
  // The node's state, not a fault: refused before any record, for an operator to clear.
  const msg = await expectCode(h.client.createVolume(volumeRequest(name, 16 * MiB, { cap: EXT4 })), status.FAILED_PRECONDITION, 'a create whose LV name is taken by a foreign LV');
  assert.match(msg, /is a logical volume without the tag .*Lode neither uses nor removes it/);
  assert.ok((await report('lvs', 'lv_name', vg)).some((r) => r.lv_name === clash), 'the foreign LV is still there');
  assert.deepEqual(await h.poolFiles(POOL), [], 'the failed create left no record');

  // An LV with the pool's tag and no record: not provably an interrupted create, so kept.
  const stray = `${LV_PREFIX}lv-${'0'.repeat(40)}`;
  await lvmTool('lvcreate', ['-q', '-y', '-L', '16m', '-n', stray, '--addtag', poolTag(POOL), vg]);
  await h.kill();
  await h.startProcess();
  assert.match(h.log, /volume quarantined: not served, not deleted/);
  assert.ok((await report('lvs', 'lv_name', vg)).some((r) => r.lv_name === stray), 'the unrecorded LV is kept');
  await expectCode(h.client.deleteVolume({ volume_id: `lv-${'0'.repeat(40)}` }), status.FAILED_PRECONDITION, 'deleting a quarantined volume');
  assert.ok((await report('lvs', 'lv_name', vg)).some((r) => r.lv_name === stray), 'still kept after a delete was asked');
});

test('raw block: a read-only publication gets a read-only loop device over the LV of its own, which refuses writes and goes with its unpublish', { skip: guestOnly }, async (t) => {
  const { h, vg } = await start(t, { imageMiB: 256 });
  const v = await createVolume(h, 'raw-ro', 32 * MiB, { cap: rawCap() });
  const staging = h.stagingPath('raw');
  const rw = h.targetPath('raw-rw');
  const ro = h.targetPath('raw-ro');
  await h.client.nodeStageVolume({ volume_id: v.id, staging_target_path: staging, volume_capability: rawCap() });
  await h.client.nodePublishVolume({ volume_id: v.id, staging_target_path: staging, target_path: rw, volume_capability: rawCap() });
  // Loop devices over a device node (the LV: /dev/mapper/... without udev, /dev/dm-N with it), not over an image file.
  const overLvs = async () => (await listLoopDevices()).filter((d) => d.backingFile.startsWith('/dev/')).map((d) => d.device);
  assert.deepEqual(await overLvs(), [], 'a writable publication is the LV itself, no loop device');
  await h.client.nodePublishVolume({ volume_id: v.id, staging_target_path: staging, target_path: ro, volume_capability: rawCap(), readonly: true });
  const [roDevice, ...more] = await overLvs();
  assert.ok(roDevice !== undefined && more.length === 0, 'the read-only publication has a device of its own');
  assert.equal((await fs.readFile(`/sys/block/${path.basename(roDevice)}/ro`, 'utf8')).trim(), '1', 'and the kernel holds it read-only');

  const data = randomBytes(64 * 1024);
  await writeAtSynced(rw, data, 0);
  assert.deepEqual(await readAt(ro, 0, data.length), data, 'the read-only device shows the LV');
  const refused = await writeRefusal(ro);
  assert.ok(refused !== undefined && ['EROFS', 'EACCES', 'EPERM'].includes(refused), `a write to the read-only publication must fail, got ${refused ?? 'success'}`);

  await h.client.nodeUnpublishVolume({ volume_id: v.id, target_path: ro });
  assert.deepEqual(await overLvs(), [], 'its loop device went with it');
  await h.client.nodeUnpublishVolume({ volume_id: v.id, target_path: rw });
  await h.client.nodeUnstageVolume({ volume_id: v.id, staging_target_path: staging });
  await h.client.deleteVolume({ volume_id: v.id });
  assert.ok(!(await report('lvs', 'lv_name', vg)).some((row) => row.lv_name === `${LV_PREFIX}${v.id}`), 'the LV is gone');
});
