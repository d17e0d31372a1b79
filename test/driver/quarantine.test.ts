// Lode never destroys what it cannot account for: unusable records and images without one are quarantined (at start-up, or by a create that meets one), kept byte for byte, reported, and served again once repaired.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { objectIdForName } from '../../src/driver/request/object-ids.js';
import { DriverHarness } from '../helpers/driver-harness.js';
import { parseExposition, sampleValue } from '../metrics/prom-text.js';
import {
  available, createVolume, diskState, expectCode, fileHash, httpGet, logEntries, metricsPort, MiB, mountAt, mountsAt, rawCap,
  stageAndPublish, status, teardown, writeRandomFile,
} from './support.js';

const POOL_BYTES = 1024 * MiB;
const BLOCK_BYTES = 16 * MiB;

/** How each damaged record is made from the one Lode wrote (its text). */
const DAMAGE: Array<[string, (text: string) => string]> = [
  // What a newer Lode would write after a format change: met on any rollback.
  ['q-newer', (t) => JSON.stringify({ ...(JSON.parse(t) as object), version: 2, placement: { tier: 'nvme' } })],
  ['q-empty', () => ''],
  ['q-half', (t) => t.slice(0, Math.floor(t.length / 2))],
  ['q-misnamed', (t) => JSON.stringify({ ...(JSON.parse(t) as object), id: 'lv-someone-else' })],
  ['q-invalid', (t) => JSON.stringify({ ...(JSON.parse(t) as object), formatted: 'yes' })],
  ['q-noversion', (t) => { const r = JSON.parse(t) as Record<string, unknown>; delete r['version']; return JSON.stringify(r); }],
];

function volumesDir(h: DriverHarness): string {
  return path.join(h.poolDir('fast'), 'volumes');
}
const imageOf = (h: DriverHarness, id: string) => path.join(volumesDir(h), `${id}.img`);
const recordOf = (h: DriverHarness, id: string) => path.join(volumesDir(h), `${id}.json`);

async function quarantinedGauge(port: number): Promise<number> {
  const r = await httpGet(port, '/metrics');
  assert.equal(r.status, 200);
  return sampleValue(parseExposition(r.body), 'lode_quarantined_volumes', { pool: 'fast' });
}

/** Restarts the driver and returns the port of its metrics endpoint and where its log starts. */
async function restart(h: DriverHarness): Promise<{ port: number; since: number }> {
  await h.stop();
  const since = h.log.length;
  await h.startProcess();
  return { port: await metricsPort(h, since), since };
}

test('unusable records quarantine their volumes: image and record untouched across restarts, reported, every other volume served, served again once repaired', async () => {
  const h = await DriverHarness.start({ pools: [{ name: 'fast', size: '1Gi' }], extraArgs: ['--metrics-address', '127.0.0.1:0'] });
  try {
    const ids = new Map<string, string>();
    for (const [name] of DAMAGE) ids.set(name, (await createVolume(h, name, BLOCK_BYTES, { cap: rawCap() })).id);
    // A volume in use by a pod when its record goes bad: the mount must outlive the restart.
    const mounted = await createVolume(h, 'q-mounted', 32 * MiB);
    const pub = await stageAndPublish(h, mounted.id, 'q-mounted');
    const mountedHash = await writeRandomFile(path.join(pub.target, 'data'), 4 * MiB);
    const ok = await createVolume(h, 'ok', 16 * MiB);
    await h.stop();

    // A known pattern over every byte of each image, then the damage to its record.
    const imageHash = new Map<string, string>();
    const original = new Map<string, string>();
    const damaged = new Map<string, string>();
    for (const [name, damage] of DAMAGE) {
      const id = ids.get(name)!;
      imageHash.set(id, await writeRandomFile(imageOf(h, id), BLOCK_BYTES));
      const text = await fs.readFile(recordOf(h, id), 'utf8');
      original.set(id, text);
      damaged.set(id, damage(text));
    }
    original.set(mounted.id, await fs.readFile(recordOf(h, mounted.id), 'utf8'));
    damaged.set(mounted.id, '');
    for (const [id, text] of damaged) await fs.writeFile(recordOf(h, id), text);
    const quarantined = [...damaged.keys()];

    for (let round = 1; round <= 2; round++) {
      const { port, since } = await restart(h);
      for (const [id, hash] of imageHash) assert.equal(await fileHash(imageOf(h, id)), hash, `round ${round}: every byte of ${id}'s image kept`);
      for (const [id, text] of damaged) assert.equal(await fs.readFile(recordOf(h, id), 'utf8'), text, `round ${round}: ${id}'s record left as it was`);
      assert.equal((await mountAt(pub.target)).fsType, 'ext4', 'the pod\'s mount is still there');
      assert.equal(await fileHash(path.join(pub.target, 'data')), mountedHash, 'and its data readable');

      // Reported: one error line per volume, the gauge, and /healthz, while Probe stays ready.
      const errors = logEntries(h, since).filter((e) => e['level'] === 'error' && e['msg'] === 'volume quarantined: not served, not deleted');
      assert.deepEqual(errors.map((e) => e['id']).sort(), [...quarantined].sort());
      assert.equal(errors.find((e) => e['id'] === ids.get('q-newer'))?.['cause'], 'newer-version');
      assert.equal(errors.find((e) => e['id'] === ids.get('q-half'))?.['cause'], 'unreadable-record');
      assert.equal(await quarantinedGauge(port), quarantined.length);
      const health = await httpGet(port, '/healthz');
      assert.equal(health.status, 200, health.body);
      assert.equal(health.body.split('\n')[0], 'ok');
      for (const id of quarantined) assert.ok(health.body.includes(id), `/healthz names ${id}: ${health.body}`);
      assert.equal((await h.client.probe({})).ready?.value, true);

      // Not served, not reused, not deleted; their space stays taken.
      assert.deepEqual((await h.client.listVolumes({})).entries.map((e) => e.volume?.volume_id), [ok.id]);
      assert.equal(await available(h), POOL_BYTES - DAMAGE.length * BLOCK_BYTES - 32 * MiB - 16 * MiB);
      for (const [name] of DAMAGE) {
        const id = ids.get(name)!;
        const msg = await expectCode(h.client.createVolume({ name, capacity_range: { required_bytes: BLOCK_BYTES }, volume_capabilities: [rawCap()] }),
          status.FAILED_PRECONDITION, `CreateVolume ${name}`);
        assert.match(msg, /quarantined/);
        assert.ok(msg.includes(id), msg);
        await expectCode(h.client.deleteVolume({ volume_id: id }), status.FAILED_PRECONDITION, `DeleteVolume ${name}`);
      }
      await expectCode(h.client.nodeStageVolume({ volume_id: ids.get('q-newer')!, staging_target_path: h.stagingPath('q-newer'), volume_capability: rawCap() }),
        status.FAILED_PRECONDITION, 'NodeStageVolume of a quarantined volume');
      await expectCode(h.client.nodeUnpublishVolume({ volume_id: mounted.id, target_path: pub.target }), status.FAILED_PRECONDITION, 'NodeUnpublishVolume');
      assert.equal((await mountsAt(pub.target)).length, 1, 'the refused unpublish left the mount');
      for (const [id, hash] of imageHash) assert.equal(await fileHash(imageOf(h, id)), hash, `round ${round}: ${id}'s image kept after the refused calls`);

      // Every other volume works as usual.
      const p = await stageAndPublish(h, ok.id, `ok-${round}`);
      await fs.writeFile(path.join(p.target, 'f'), 'served');
      await h.client.nodeUnpublishVolume({ volume_id: ok.id, target_path: p.target });
      await h.client.nodeUnstageVolume({ volume_id: ok.id, staging_target_path: p.staging });
      const fresh = await createVolume(h, `fresh-${round}`, 16 * MiB);
      await h.client.deleteVolume({ volume_id: fresh.id });
    }

    // The repairs an operator makes: for a rollback, the record as the older driver wrote it
    // (what rolling forward amounts to here); for the mounted volume, the record written by
    // hand from the template in docs/operations.md, with its mounts left for kubelet's teardown
    // to find. The next start serves the volumes again.
    await h.stop();
    for (const [id, text] of original) if (id !== mounted.id) await fs.writeFile(recordOf(h, id), text);
    const byHand = {
      version: 1, id: mounted.id, name: 'q-mounted', pool: 'fast', capacityBytes: (await fs.stat(imageOf(h, mounted.id))).size,
      state: 'ready', accessType: 'mount', fsType: 'ext4', formatted: true, parameters: {}, ephemeral: false,
      createdAt: '2026-01-01T00:00:00.000Z', staging: null, stagingFlags: [], publications: [],
    };
    await fs.writeFile(recordOf(h, mounted.id), JSON.stringify(byHand, null, 1));
    const { port } = await restart(h);
    assert.equal(await quarantinedGauge(port), 0);
    assert.equal((await httpGet(port, '/healthz')).body, 'ok\n');
    const listed = (await h.client.listVolumes({})).entries.map((e) => e.volume?.volume_id).sort();
    assert.deepEqual(listed, [...ids.values(), mounted.id, ok.id].sort());
    for (const [id, hash] of imageHash) assert.equal(await fileHash(imageOf(h, id)), hash, `${id}'s image still whole after the repair`);
    const newer = ids.get('q-newer')!;
    await stageAndPublish(h, newer, 'q-newer', rawCap());
    assert.equal(await fileHash(h.targetPath('q-newer')), imageHash.get(newer), 'the repaired volume serves the very bytes it held');
    await teardown(h, newer, 'q-newer');
    assert.equal(await fileHash(path.join(pub.target, 'data')), mountedHash);
    await h.client.nodeUnpublishVolume({ volume_id: mounted.id, target_path: pub.target });
    await h.client.nodeUnstageVolume({ volume_id: mounted.id, staging_target_path: pub.staging });
    assert.deepEqual(await mountsAt(pub.staging), [], 'the hand-written record let kubelet\'s teardown unmount it');
    await stageAndPublish(h, mounted.id, 'q-mounted');
    assert.equal(await fileHash(path.join(pub.target, 'data')), mountedHash, 'staged again, not formatted again');
    await teardown(h, mounted.id, 'q-mounted');
    for (const [name] of DAMAGE) if (name !== 'q-newer') await h.client.deleteVolume({ volume_id: ids.get(name)! });
    await h.client.deleteVolume({ volume_id: ok.id });
    assert.deepEqual(await diskState(h), { files: [], mounts: [], loops: [] });
    assert.equal(await available(h), POOL_BYTES);
  } finally {
    await h.cleanup();
  }
});

test('an image without any record file is kept, reported as unaccounted, never reused by a create of its name, and its space stays taken', async () => {
  const h = await DriverHarness.start({ pools: [{ name: 'fast', size: '1Gi' }], extraArgs: ['--metrics-address', '127.0.0.1:0'] });
  try {
    const { id } = await createVolume(h, 'orphan', BLOCK_BYTES, { cap: rawCap() });
    await h.stop();
    const hash = await writeRandomFile(imageOf(h, id), BLOCK_BYTES);
    await fs.rm(recordOf(h, id));

    const { port, since } = await restart(h);
    assert.equal(await fileHash(imageOf(h, id)), hash, 'every byte kept');
    const line = logEntries(h, since).find((e) => e['level'] === 'error' && e['id'] === id);
    assert.equal(line?.['cause'], 'no-record', JSON.stringify(line));
    assert.equal(await quarantinedGauge(port), 1);
    assert.equal(await available(h), POOL_BYTES - BLOCK_BYTES);
    const msg = await expectCode(h.client.createVolume({ name: 'orphan', capacity_range: { required_bytes: BLOCK_BYTES }, volume_capabilities: [rawCap()] }),
      status.FAILED_PRECONDITION, 'CreateVolume over an unaccounted image');
    assert.match(msg, /quarantined/);
    await expectCode(h.client.deleteVolume({ volume_id: id }), status.FAILED_PRECONDITION, 'DeleteVolume of an unaccounted image');
    assert.equal(await fileHash(imageOf(h, id)), hash, 'neither call touched it');
    assert.deepEqual(await h.poolFiles(), [`${id}.img`], 'and no record was made for it');

    // The operator decides it is garbage and removes it by hand; the next start forgets it.
    await h.stop();
    await fs.rm(imageOf(h, id));
    const again = await restart(h);
    assert.equal(await quarantinedGauge(again.port), 0);
    assert.equal(await available(h), POOL_BYTES);
    await createVolume(h, 'orphan', BLOCK_BYTES, { cap: rawCap() });
    await h.client.deleteVolume({ volume_id: id });
    assert.deepEqual(await diskState(h), { files: [], mounts: [], loops: [] });
  } finally {
    await h.cleanup();
  }
});

test('an image planted while the driver runs, where a create of its name goes, is quarantined then as at start-up: refused, kept, reported, its space taken', async () => {
  const h = await DriverHarness.start({ pools: [{ name: 'fast', size: '1Gi' }], extraArgs: ['--metrics-address', '127.0.0.1:0'] });
  try {
    const port = await metricsPort(h);
    // Ids follow from the name, so whoever has root on the node can put a file where a create's image goes.
    const id = objectIdForName('volume', 'planted', h.nodeId);
    const hash = await writeRandomFile(imageOf(h, id), BLOCK_BYTES);
    const since = h.log.length;
    const create = () => h.client.createVolume({ name: 'planted', capacity_range: { required_bytes: BLOCK_BYTES }, volume_capabilities: [rawCap()] });
    for (let i = 0; i < 2; i++) {
      const msg = await expectCode(create(), status.FAILED_PRECONDITION, 'CreateVolume over a planted image');
      assert.match(msg, /quarantined \(no-record/);
      assert.ok(msg.includes(imageOf(h, id)), `the refusal names the image: ${msg}`);
    }
    assert.equal(await fileHash(imageOf(h, id)), hash, 'neither create adopted or touched it');
    assert.deepEqual(await h.poolFiles(), [`${id}.img`], 'and no record was made for it');
    const lines = logEntries(h, since).filter((e) => e['level'] === 'error' && e['id'] === id);
    assert.deepEqual(lines.map((e) => e['cause']), ['no-record'], 'one quarantine line, as start-up writes');
    assert.equal(await quarantinedGauge(port), 1);
    const health = await httpGet(port, '/healthz');
    assert.ok(health.body.includes(id), `/healthz names it: ${health.body}`);
    assert.equal(await available(h), POOL_BYTES - BLOCK_BYTES, 'its space stays taken');
    assert.deepEqual((await h.client.listVolumes({})).entries, [], 'not served');
    await expectCode(h.client.deleteVolume({ volume_id: id }), status.FAILED_PRECONDITION, 'DeleteVolume of the quarantined id');
    assert.equal(await fileHash(imageOf(h, id)), hash);

    // The next start finds it as well; once the operator removes it, the name is Lode's again.
    const again = await restart(h);
    assert.equal(await quarantinedGauge(again.port), 1);
    await h.stop();
    await fs.rm(imageOf(h, id));
    await h.startProcess();
    assert.equal((await createVolume(h, 'planted', BLOCK_BYTES, { cap: rawCap() })).id, id);
    await h.client.deleteVolume({ volume_id: id });
    assert.deepEqual(await diskState(h), { files: [], mounts: [], loops: [] });
    assert.equal(await available(h), POOL_BYTES);
  } finally {
    await h.cleanup();
  }
});

test('a record field this driver does not know survives its rewrites (the compatibility rule lets newer drivers add optional fields)', async () => {
  const h = await DriverHarness.start({ pools: [{ name: 'fast', size: '1Gi' }] });
  try {
    const { id } = await createVolume(h, 'extra-field', BLOCK_BYTES, { cap: rawCap() });
    await h.stop();
    const record = JSON.parse(await fs.readFile(recordOf(h, id), 'utf8')) as Record<string, unknown>;
    await fs.writeFile(recordOf(h, id), JSON.stringify({ ...record, addedLater: { tier: 'nvme' } }));
    await h.startProcess();
    await stageAndPublish(h, id, 'extra', rawCap()); // both rewrite the record
    const rewritten = JSON.parse(await fs.readFile(recordOf(h, id), 'utf8')) as Record<string, unknown>;
    assert.equal(rewritten['staging'], h.stagingPath('extra'), 'the record was rewritten');
    assert.deepEqual(rewritten['addedLater'], { tier: 'nvme' });
    await teardown(h, id, 'extra');
    assert.deepEqual(await diskState(h), { files: [], mounts: [], loops: [] });
  } finally {
    await h.cleanup();
  }
});
