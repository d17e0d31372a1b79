// Conformance of snapshots, restores and clones: data byte for byte, sizes, refusals, restarts, SIGKILL at every step, and the pool back to its start.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type * as csi from '../../src/csi/types.js';
import { available, expectCode, fileHash, fsCap, stageAndPublish, status, teardown, usage, writeRandomFile } from '../driver/support.js';
import { assertEveryStorageRecorded, assertNothingLeft, assertStorageMatchesRecords, POOL, sizeFor, snapshot, startDriver, type Conformance } from './checks.js';
import { diedAtFailpoint } from './crash-points.js';
import type { BackendFixture } from './fixture.js';

type Guard = (body: (t: TestContext) => Promise<void>) => (t: TestContext) => Promise<void>;

const DATA = 'data';
const NODE = 'node-conf';

/** A CreateVolume request filled from `source`. */
function fromSource(name: string, bytes: number, cap: csi.VolumeCapability, source: csi.VolumeContentSource, limit = 0): csi.CreateVolumeRequest {
  return { name, capacity_range: { required_bytes: bytes, limit_bytes: limit }, volume_capabilities: [cap], parameters: { pool: POOL }, volume_content_source: source };
}

async function snapshotIds(c: Conformance, filter: Partial<csi.ListSnapshotsRequest> = {}): Promise<string[]> {
  return (await c.h.client.listSnapshots(filter)).entries.map((e) => e.snapshot?.snapshot_id ?? '');
}

/** Every file of the pool's snapshots folder (records and the backend's own files). */
export async function snapshotFiles(c: Conformance): Promise<string[]> {
  return (await fs.readdir(path.join(c.poolDir, 'snapshots')).catch(() => [] as string[])).sort();
}

/** Writes `bytes` of fresh data at the volume's path and returns its hash. */
async function fill(target: string, bytes: number): Promise<string> {
  return writeRandomFile(path.join(target, DATA), bytes);
}

export function registerSnapshotCases(fixture: BackendFixture, guarded: Guard, main: boolean, crashPoints: readonly string[]): void {
  const independent = fixture.capabilities.snapshots?.independent ?? true;

  if (main) test('snapshots: taken of a published volume, restored (also larger) and cloned byte for byte; listed, paged and filtered; kept across a restart; refusals; all capacity back', guarded(async (t) => {
    const c = await startDriver(t, fixture);
    const before = await snapshot(c);
    const cap = fsCap(c.fsType);
    const size = await sizeFor(c, c.fsType);
    const src = (await c.h.client.createVolume({ name: 'conf-snap-src', capacity_range: { required_bytes: size }, volume_capabilities: [cap], parameters: { pool: POOL } })).volume;
    assert.ok(src);
    const p = await stageAndPublish(c.h, src.volume_id, 'src', cap);
    const first = await fill(p.target, 4 << 20);
    const free = await available(c.h, { pool: POOL });

    const req = { name: 'conf-snap-1', source_volume_id: src.volume_id, parameters: {} };
    const snap = (await c.h.client.createSnapshot(req)).snapshot;
    assert.ok(snap);
    assert.equal(snap.ready_to_use, true, 'ready at once');
    assert.equal(snap.source_volume_id, src.volume_id);
    assert.equal(Number(snap.size_bytes), Number(src.capacity_bytes), 'size_bytes is the source\'s size: the smallest restore');
    assert.match(snap.snapshot_id, new RegExp(`^sn-[0-9a-f]{32}\\.${NODE}$`), 'the id names the node holding it');
    assert.ok(Number(snap.creation_time?.seconds ?? 0) > 0, 'creation_time is set');
    const again = (await c.h.client.createSnapshot(req)).snapshot;
    assert.equal(again?.snapshot_id, snap.snapshot_id, 'the same name finds the same snapshot');
    const charged = free - (await available(c.h, { pool: POOL }));
    assert.ok(charged >= 0 && charged <= Number(src.capacity_bytes), `a snapshot is charged between nothing and its source's size: ${charged}`);
    await expectCode(c.h.client.createSnapshot({ ...req, parameters: { 'no-such': 'x' } }), status.INVALID_ARGUMENT, 'an unknown snapshot parameter');
    await expectCode(c.h.client.createSnapshot({ name: 'conf-snap-x', source_volume_id: `lv-${'0'.repeat(32)}.${NODE}`, parameters: {} }), status.NOT_FOUND, 'a snapshot of a missing volume');

    // The source moves on; the snapshot must not.
    const second = await fill(p.target, 4 << 20);
    assert.notEqual(second, first);
    const snap2 = (await c.h.client.createSnapshot({ name: 'conf-snap-2', source_volume_id: src.volume_id, parameters: {} })).snapshot;
    assert.ok(snap2);
    await expectCode(c.h.client.createSnapshot({ name: 'conf-snap-2', source_volume_id: snap.snapshot_id.replace('sn-', 'lv-'), parameters: {} }),
      status.ALREADY_EXISTS, 'the same snapshot name for another source');

    assert.deepEqual(await snapshotIds(c), [snap.snapshot_id, snap2.snapshot_id].sort(), 'both listed');
    assert.deepEqual(await snapshotIds(c, { snapshot_id: snap2.snapshot_id }), [snap2.snapshot_id], 'filtered by id');
    assert.deepEqual(await snapshotIds(c, { source_volume_id: src.volume_id }), [snap.snapshot_id, snap2.snapshot_id].sort(), 'filtered by source');
    assert.deepEqual(await snapshotIds(c, { snapshot_id: `sn-${'0'.repeat(32)}.${NODE}` }), [], 'an unknown id lists nothing');
    const page = await c.h.client.listSnapshots({ max_entries: 1 });
    assert.equal(page.entries.length, 1);
    const rest = await c.h.client.listSnapshots({ max_entries: 1, starting_token: page.next_token });
    assert.equal(rest.next_token, '', 'two pages of one');
    assert.deepEqual([...page.entries, ...rest.entries].map((e) => e.snapshot?.snapshot_id), [snap.snapshot_id, snap2.snapshot_id].sort());

    await c.h.restart();
    assert.deepEqual(await snapshotIds(c), [snap.snapshot_id, snap2.snapshot_id].sort(), 'snapshots survive a restart');

    // A restore twice the size: the data, and a filesystem grown to the new size.
    const restored = (await c.h.client.createVolume(fromSource('conf-restore', 2 * size, cap, { snapshot: { snapshot_id: snap.snapshot_id } }))).volume;
    assert.ok(restored);
    assert.ok(Number(restored.capacity_bytes) >= 2 * size, 'the restore has the size asked');
    assert.equal(restored.content_source?.snapshot?.snapshot_id, snap.snapshot_id, 'the answer names its source');
    const r = await stageAndPublish(c.h, restored.volume_id, 'restore', cap);
    assert.equal(await fileHash(path.join(r.target, DATA)), first, 'the restore holds the data as it was when the snapshot was taken');
    const total = usage(await c.h.client.nodeGetVolumeStats({ volume_id: restored.volume_id, volume_path: r.target }), 'BYTES').total;
    assert.ok(total > size, `the restore's filesystem has its new size: ${total} bytes of a ${2 * size}-byte volume`);
    await writeRandomFile(path.join(r.target, 'more'), 1 << 20);

    const clone = (await c.h.client.createVolume(fromSource('conf-clone', size, cap, { volume: { volume_id: src.volume_id } }))).volume;
    assert.ok(clone);
    assert.equal(clone.content_source?.volume?.volume_id, src.volume_id);
    const k = await stageAndPublish(c.h, clone.volume_id, 'clone', cap);
    assert.equal(await fileHash(path.join(k.target, DATA)), second, 'the clone holds the source\'s data as it is now');
    assert.equal(await fileHash(path.join(p.target, DATA)), second, 'the source is unchanged by being cloned (and writable: not left frozen)');
    await fill(p.target, 1 << 20);

    await expectCode(c.h.client.createVolume(fromSource('conf-small', size, cap, { snapshot: { snapshot_id: snap.snapshot_id } }, size - (1 << 20))),
      status.OUT_OF_RANGE, 'a restore smaller than its snapshot');
    await expectCode(c.h.client.createVolume(fromSource('conf-gone', size, cap, { snapshot: { snapshot_id: `sn-${'0'.repeat(32)}.${NODE}` } })),
      status.NOT_FOUND, 'a restore of a snapshot this node should hold but does not');
    const msg = await expectCode(c.h.client.createVolume(fromSource('conf-away', size, cap, { snapshot: { snapshot_id: `sn-${'0'.repeat(32)}.node-far` } })),
      status.RESOURCE_EXHAUSTED, 'a restore of a snapshot held by another node');
    assert.match(msg, /node node-far/, 'the refusal names the node holding the snapshot');
    await expectCode(c.h.client.deleteSnapshot({ snapshot_id: `sn-${'0'.repeat(32)}.node-far` }), status.FAILED_PRECONDITION,
      'deleting another node\'s snapshot here (an OK would forget its space)');
    await c.h.client.deleteSnapshot({ snapshot_id: `sn-${'0'.repeat(32)}.${NODE}` });
    const other = c.fixture.capabilities.fsTypes.find((f) => f !== c.fsType);
    if (other !== undefined) {
      await expectCode(c.h.client.createVolume(fromSource('conf-otherfs', size, fsCap(other), { snapshot: { snapshot_id: snap.snapshot_id } })),
        status.INVALID_ARGUMENT, 'a restore asking for another filesystem than its snapshot holds');
    }

    await teardown(c.h, clone.volume_id, 'clone');
    await teardown(c.h, restored.volume_id, 'restore');
    if (independent) {
      // The snapshot does not need its source: restore it once more after the source is gone.
      await teardown(c.h, src.volume_id, 'src');
      const late = (await c.h.client.createVolume(fromSource('conf-late', size, cap, { snapshot: { snapshot_id: snap2.snapshot_id } }))).volume;
      assert.ok(late);
      const l = await stageAndPublish(c.h, late.volume_id, 'late', cap);
      assert.equal(await fileHash(path.join(l.target, DATA)), second, 'a snapshot outlives its source');
      await teardown(c.h, late.volume_id, 'late');
    } else {
      await c.h.client.nodeUnpublishVolume({ volume_id: src.volume_id, target_path: p.target });
      await c.h.client.nodeUnstageVolume({ volume_id: src.volume_id, staging_target_path: p.staging });
      await expectCode(c.h.client.deleteVolume({ volume_id: src.volume_id }), status.FAILED_PRECONDITION, 'deleting a volume its snapshots depend on');
    }
    for (const id of [snap.snapshot_id, snap2.snapshot_id]) {
      await c.h.client.deleteSnapshot({ snapshot_id: id });
      await c.h.client.deleteSnapshot({ snapshot_id: id });
    }
    if (!independent) await c.h.client.deleteVolume({ volume_id: src.volume_id });
    assert.deepEqual(await snapshotIds(c), [], 'no snapshot listed');
    assert.deepEqual(await snapshotFiles(c), [], 'no snapshot record or storage left');
    await assertNothingLeft(c, before);
  }));

  for (const point of crashPoints) {
    test(`snapshot crash point: SIGKILL at ${point}, restart, retry; the source writable, the data right, nothing left`, guarded(async (t) => {
      await crashAt(t, fixture, point);
    }));
  }
}

/**
 * The failpoints of taking, restoring from and deleting a snapshot, and of cloning a mounted
 * volume; a restore passes the create's own (the first create after arming is the restore).
 */
export const SNAPSHOT_FAILPOINTS = [
  'snapshot:recorded', 'snapshot:frozen', 'snapshot:taken', 'create:allocated', 'clone:frozen', 'snapshot-delete:marked', 'snapshot-delete:released',
] as const;

async function crashAt(t: TestContext, fixture: BackendFixture, point: string): Promise<void> {
  const c = await startDriver(t, fixture);
  const before = await snapshot(c);
  const cap = fsCap(c.fsType);
  const size = await sizeFor(c, c.fsType);
  const src = (await c.h.client.createVolume({ name: 'conf-crash-src', capacity_range: { required_bytes: size }, volume_capabilities: [cap], parameters: { pool: POOL } })).volume;
  assert.ok(src);
  const p = await stageAndPublish(c.h, src.volume_id, 'src', cap);
  const data = await fill(p.target, 2 << 20);
  // Armed only now: the source's own create passes create:allocated too.
  await c.h.restart({ LODE_FAILPOINT: point });
  let fired = false;
  /** One call as a CO retries it: a SIGKILL at the armed point, a restart, the same call again. */
  const converge = async <T>(call: () => Promise<T>): Promise<T> => {
    try {
      return await call();
    } catch (err) {
      if (fired) throw err;
      // Bounded: a call that merely failed leaves the driver running, and must fail the case, not hang it.
      await diedAtFailpoint(c, point).catch((why: unknown) => {
        throw new Error(`${(why as Error).message}; the call failed with: ${(err as Error).message}`);
      });
      fired = true;
      // Before the restart's recovery, what the crash left must already be recorded.
      await assertEveryStorageRecorded(c);
      await c.h.startProcess();
      const answer = await call();
      await assertStorageMatchesRecords(c);
      return answer;
    }
  };
  const snap = (await converge(() => c.h.client.createSnapshot({ name: 'conf-crash-snap', source_volume_id: src.volume_id, parameters: {} }))).snapshot;
  assert.ok(snap?.ready_to_use);
  // A crash while the source was frozen must not leave it frozen: this write would hang.
  await fill(p.target, 1 << 20);
  const restored = (await converge(() => c.h.client.createVolume(fromSource('conf-crash-restore', size, cap, { snapshot: { snapshot_id: snap.snapshot_id } })))).volume;
  assert.ok(restored);
  const r = await stageAndPublish(c.h, restored.volume_id, 'restore', cap);
  assert.equal(await fileHash(path.join(r.target, DATA)), data, 'the restore holds the snapshot\'s data');
  await teardown(c.h, restored.volume_id, 'restore');
  const now = await fill(p.target, 1 << 20);
  const clone = (await converge(() => c.h.client.createVolume(fromSource('conf-crash-clone', size, cap, { volume: { volume_id: src.volume_id } })))).volume;
  assert.ok(clone);
  await fill(p.target, 1 << 20); // would hang if the crash left the source frozen
  const k = await stageAndPublish(c.h, clone.volume_id, 'clone', cap);
  assert.equal(await fileHash(path.join(k.target, DATA)), now, 'the clone holds the source\'s data');
  await teardown(c.h, clone.volume_id, 'clone');
  await converge(() => c.h.client.deleteSnapshot({ snapshot_id: snap.snapshot_id }));
  assert.deepEqual(await snapshotIds(c), []);
  await teardown(c.h, src.volume_id, 'src');
  assert.ok(fired || (fixture.capabilities.snapshots?.notReached ?? []).includes(point), `failpoint ${point} never fired`);
  assert.deepEqual(await snapshotFiles(c), [], 'no snapshot record or storage left');
  await assertNothingLeft(c, before);
}
