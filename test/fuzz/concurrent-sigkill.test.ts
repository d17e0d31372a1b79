// SIGKILL while creates, deletes and expands of several volumes are in flight on one loop pool: every retried call converges, no image or record is left without the other, the space ledger is the sum of the records, and the data of finished volumes is intact.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { status } from '@grpc/grpc-js';
import { grpcCode } from '../../src/csi/client.js';
import { DriverHarness } from '../helpers/driver-harness.js';
import { available, fsCap, MiB } from '../driver/support.js';
import { envInt, fuzzSeed, FuzzRandom } from './fuzz-random.js';
import { volumeDataHash, writeVolumeData } from './volume-data.js';
import { converge } from './converge.js';

const SEED = fuzzSeed();
/** Rounds, one kill each. */
const ROUNDS = envInt('LODE_CONCURRENT_KILL_ROUNDS', 10);
const DATA_BYTES = 256 * 1024;
const POOL = 'fast';
const CAP = fsCap('ext4');

interface Vol {
  name: string;
  id: string;
  bytes: number;
}

/** A finished volume, staged and published, with what was written into it. */
interface Finished extends Vol {
  target: string;
  hash: string;
}

interface Recorded {
  id: string;
  name: string;
  state: string;
  capacityBytes: number;
}

let h: DriverHarness;
let capacityAtStart = 0;


async function create(v: Vol): Promise<void> {
  const res = await h.client.createVolume({ name: v.name, capacity_range: { required_bytes: v.bytes }, volume_capabilities: [CAP] });
  v.id = res.volume?.volume_id ?? '';
  assert.notEqual(v.id, '', `${v.name}: a volume id`);
}

/** The pool's volume records, by id. */
async function records(): Promise<Map<string, Recorded>> {
  const dir = path.join(h.poolDir(POOL), 'volumes');
  const out = new Map<string, Recorded>();
  for (const name of await h.poolFiles(POOL)) {
    if (!name.endsWith('.json')) continue;
    const r = JSON.parse(await fs.readFile(path.join(dir, name), 'utf8')) as Recorded;
    out.set(r.id, r);
  }
  return out;
}

/**
 * What a pool must be once every call has converged: each image has its record and each record
 * its image at the recorded size, every record is ready, ListVolumes says the same, and the
 * available space is what the pool had less the sum of the records.
 */
async function assertConsistent(where: string, expected: ReadonlyMap<string, number>): Promise<void> {
  const dir = path.join(h.poolDir(POOL), 'volumes');
  const files = await h.poolFiles(POOL);
  const recs = await records();
  const images = files.filter((f) => f.endsWith('.img')).map((f) => f.slice(0, -'.img'.length)).sort();
  assert.deepEqual(files.filter((f) => !f.endsWith('.img') && !f.endsWith('.json')), [], `${where}: no temporary file left`);
  assert.deepEqual(images, [...recs.keys()].sort(), `${where}: every image has its record and every record its image`);
  for (const r of recs.values()) {
    assert.equal(r.state, 'ready', `${where}: ${r.id} (${r.name}) is ${r.state} after its call converged`);
    assert.equal((await fs.stat(path.join(dir, `${r.id}.img`))).size, r.capacityBytes, `${where}: ${r.name}'s image is its recorded size`);
  }
  const got = new Map([...recs.values()].map((r) => [r.name, r.capacityBytes]));
  assert.deepEqual([...got].sort(), [...expected].sort(), `${where}: exactly the volumes whose calls converged, at the sizes asked`);
  const listed = (await h.client.listVolumes({})).entries.map((e) => [e.volume?.volume_id ?? '', Number(e.volume?.capacity_bytes ?? 0)] as const);
  assert.deepEqual(listed.sort(), [...recs.values()].map((r) => [r.id, r.capacityBytes] as const).sort(), `${where}: ListVolumes lists the records`);
  const sum = [...recs.values()].reduce((n, r) => n + r.capacityBytes, 0);
  assert.equal(await available(h, { pool: POOL }), capacityAtStart - sum, `${where}: the space ledger is the pool less the sum of the records`);
}

before(async () => {
  h = await DriverHarness.start({ pools: [{ name: POOL, size: '2Gi' }] });
  await fs.mkdir(path.join(h.kubeletDir, 'pods'), { recursive: true });
  capacityAtStart = await available(h, { pool: POOL });
});

after(async () => {
  await h?.cleanup();
});

test(`SIGKILL amid concurrent creates, deletes and expands on one pool (LODE_FUZZ_SEED=${SEED}, ${ROUNDS} rounds): every retry converges, nothing leaks, the ledger is the records' sum, finished data intact`, async (t) => {
  const rng = new FuzzRandom(SEED).fork('concurrent-sigkill');
  // Finished volumes, in use through the kills: their data must come through every one.
  const finished: Finished[] = [];
  for (let i = 0; i < 2; i++) {
    const v: Finished = { name: `done-${i}`, id: '', bytes: 32 * MiB, target: h.targetPath(`done-${i}`), hash: '' };
    await create(v);
    const staging = h.stagingPath(`done-${i}`);
    await h.client.nodeStageVolume({ volume_id: v.id, staging_target_path: staging, volume_capability: CAP });
    await h.client.nodePublishVolume({ volume_id: v.id, staging_target_path: staging, target_path: v.target, volume_capability: CAP });
    const data = rng.bytes(DATA_BYTES);
    await writeVolumeData(v.target, false, data);
    v.hash = createHash('sha256').update(data).digest('hex');
    finished.push(v);
  }
  // Volumes that are only made, grown and deleted: the calls the kills interrupt.
  const live: Vol[] = [];
  let made = 0;
  const fresh = (): Vol => ({ name: `c-${made++}`, id: '', bytes: rng.between(2, 6) * 8 * MiB });
  for (let i = 0; i < 4; i++) {
    const v = fresh();
    await create(v);
    live.push(v);
  }
  const expected = (): Map<string, number> => new Map([...finished, ...live].map((v) => [v.name, v.bytes]));
  await assertConsistent('before the kills', expected());

  let inFlightKills = 0;
  for (let n = 0; n < ROUNDS; n++) {
    // Disjoint: two to delete, two to grow (from those made before this round), three to make.
    const order = [...live];
    const doomed = [order.splice(rng.int(order.length), 1)[0] as Vol, order.splice(rng.int(order.length), 1)[0] as Vol];
    const growing = [order.splice(rng.int(order.length), 1)[0] as Vol, order.splice(rng.int(order.length), 1)[0] as Vol];
    const born = [fresh(), fresh(), fresh()];
    const calls: Array<[string, () => Promise<unknown>]> = [
      ...born.map((v): [string, () => Promise<unknown>] => [`create ${v.name}`, () => create(v)]),
      ...doomed.map((v): [string, () => Promise<unknown>] => [`delete ${v.name}`, () => h.client.deleteVolume({ volume_id: v.id })]),
      ...growing.map((v): [string, () => Promise<unknown>] => [`expand ${v.name}`, () => h.client.controllerExpandVolume({ volume_id: v.id, capacity_range: { required_bytes: v.bytes + 16 * MiB } })]),
    ];
    const delayMs = rng.int(80);
    const where = `round ${n} (LODE_FUZZ_SEED=${SEED}): SIGKILL ${delayMs} ms into ${calls.map(([w]) => w).join(', ')}`;
    if (process.env.LODE_FUZZ_VERBOSE === '1') console.log(where);
    const inFlight = calls.map(([, call]) => call().then(() => 'answered', (err: unknown) => `failed (${String(status[grpcCode(err) ?? -1] ?? err)})`));
    await new Promise((res) => setTimeout(res, delayMs));
    await h.kill();
    const firsts = await Promise.all(inFlight);
    inFlightKills += firsts.filter((f) => f !== 'answered').length;
    await h.startProcess();
    // Every call again, concurrently as the sidecars would retry them: each must converge.
    await Promise.all(calls.map(([what, call], i) => converge(`${where}: retry of ${what} (first attempt ${firsts[i]})`, call)));
    for (const v of growing) v.bytes += 16 * MiB;
    for (const v of doomed) live.splice(live.indexOf(v), 1);
    live.push(...born);
    await assertConsistent(where, expected());
    for (const v of finished) assert.equal(await volumeDataHash(v.target, false, DATA_BYTES), v.hash, `${where}: ${v.name}'s data is intact`);
  }
  t.diagnostic(`${inFlightKills} of ${ROUNDS * 7} calls were cut off by the kill; the rest answered before it`);

  // Everything made comes off through CSI, and the pool is as it was.
  for (const v of live) await h.client.deleteVolume({ volume_id: v.id });
  for (const v of finished) {
    await h.client.nodeUnpublishVolume({ volume_id: v.id, target_path: v.target });
    await h.client.nodeUnstageVolume({ volume_id: v.id, staging_target_path: h.stagingPath(v.name) });
    await h.client.deleteVolume({ volume_id: v.id });
  }
  assert.deepEqual(await h.mounts(), [], 'no mount left');
  assert.deepEqual(await h.loops(), [], 'no loop device left');
  assert.deepEqual(await h.poolFiles(POOL), [], 'no image or record left');
  assert.equal(await available(h, { pool: POOL }), capacityAtStart, 'capacity back to the starting figure');
});
