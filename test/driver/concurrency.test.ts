// Concurrent calls: parallel creates never overcommit the pool, same-volume calls answer ABORTED or converge, nothing hangs or leaks.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { DriverHarness } from '../helpers/driver-harness.js';
import { available, diskState, fsCap, MiB, mountsAt, outcome, status, volumeRequest } from './support.js';

const POOL = 256 * MiB;
/** Generous, so a deadlock fails the test with DEADLINE_EXCEEDED instead of hanging the suite. */
const CALL = { timeoutMs: 60_000 };
let h: DriverHarness;
before(async () => { h = await DriverHarness.start({ pools: [{ name: 'fast', size: '256Mi' }] }); });
after(async () => { await h?.cleanup(); });

async function imageBytes(): Promise<number> {
  let sum = 0;
  for (const f of await h.poolFiles()) {
    if (f.endsWith('.img')) sum += (await fs.stat(path.join(h.poolDir('fast'), 'volumes', f))).size;
  }
  return sum;
}

function tally(results: PromiseSettledResult<unknown>[]): Record<string, number> {
  const t: Record<string, number> = {};
  for (const r of results) t[outcome(r)] = (t[outcome(r)] ?? 0) + 1;
  return t;
}

test('8 concurrent creates of different names all succeed, then 8 concurrent deletes give everything back', async () => {
  const results = await Promise.all(Array.from({ length: 8 }, (_, i) => h.client.createVolume(volumeRequest(`cc-par-${i}`, 16 * MiB), CALL)));
  const ids = results.map((r) => r.volume?.volume_id);
  assert.equal(new Set(ids).size, 8);
  assert.equal(await available(h), POOL - 8 * 16 * MiB);
  assert.equal((await h.poolFiles()).length, 16);
  assert.equal(await imageBytes(), 8 * 16 * MiB);
  await Promise.all(ids.map((id) => h.client.deleteVolume({ volume_id: id ?? '' }, CALL)));
  assert.equal(await available(h), POOL);
  assert.deepEqual(await h.poolFiles(), []);
});

test('8 concurrent 48Mi creates in a 256Mi pool: exactly 5 succeed, 3 are RESOURCE_EXHAUSTED, nothing is overcommitted', async () => {
  const results = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => h.client.createVolume(volumeRequest(`cc-full-${i}`, 48 * MiB), CALL)));
  assert.deepEqual(tally(results), { OK: 5, [status[status.RESOURCE_EXHAUSTED]]: 3 });
  assert.equal(await available(h), POOL - 5 * 48 * MiB);
  assert.equal(await imageBytes(), 5 * 48 * MiB, 'the images hold exactly what was granted');
  assert.equal((await h.poolFiles()).length, 10, 'the refused creates left no files');
  assert.equal((await h.client.listVolumes()).entries.length, 5);
  await Promise.all(results.map(async (r) => {
    if (r.status === 'fulfilled') await h.client.deleteVolume({ volume_id: r.value.volume?.volume_id ?? '' }, CALL);
  }));
  assert.deepEqual(await h.poolFiles(), []);
});

test('concurrent CreateVolume with the same name makes one volume; every caller gets it or ABORTED, and a retry converges', async () => {
  const req = volumeRequest('cc-same-name', 32 * MiB);
  const results = await Promise.allSettled(Array.from({ length: 8 }, () => h.client.createVolume(req, CALL)));
  const t = tally(results);
  assert.deepEqual(Object.keys(t).filter((k) => k !== 'OK' && k !== 'ABORTED'), [], JSON.stringify(t));
  const ids = new Set(results.flatMap((r) => (r.status === 'fulfilled' ? [r.value.volume?.volume_id] : [])));
  assert.equal(ids.size, 1, 'all winners got the same volume');
  const again = await h.client.createVolume(req, CALL);
  assert.ok(ids.has(again.volume?.volume_id));
  assert.equal((await h.poolFiles()).length, 2, 'one image, one record');
  assert.equal(await available(h), POOL - 32 * MiB);
  await h.client.deleteVolume({ volume_id: again.volume?.volume_id ?? '' }, CALL);
});

test('two stages, two publishes and two unstages of the same volume at once: OK or ABORTED, one mount each, no leak', async () => {
  const id = (await h.client.createVolume(volumeRequest('cc-same-vol', 32 * MiB), CALL)).volume?.volume_id ?? '';
  const staging = h.stagingPath('cc-same');
  const target = h.targetPath('cc-same');
  const stage = () => h.client.nodeStageVolume({ volume_id: id, staging_target_path: staging, volume_capability: fsCap() }, CALL);
  const publish = () => h.client.nodePublishVolume({ volume_id: id, staging_target_path: staging, target_path: target, volume_capability: fsCap() }, CALL);

  for (const [what, call] of [['stage', stage], ['publish', publish]] as const) {
    const results = await Promise.allSettled([call(), call()]);
    const codes = results.map(outcome);
    assert.ok(codes.every((c) => c === 'OK' || c === 'ABORTED'), `${what}: ${codes.join(', ')}`);
    assert.ok(codes.includes('OK'), `${what}: one of them must succeed`);
    await call(); // the retry kubelet would make
  }
  assert.equal((await mountsAt(staging)).length, 1);
  assert.equal((await mountsAt(target)).length, 1);
  assert.equal((await h.loops()).length, 1);

  // Delete races unpublish: delete may be refused (busy) or ABORTED, never succeed under a mount.
  const [unpub, del] = await Promise.allSettled([
    h.client.nodeUnpublishVolume({ volume_id: id, target_path: target }, CALL),
    h.client.deleteVolume({ volume_id: id }, CALL),
  ]);
  assert.ok(['OK', 'ABORTED'].includes(outcome(unpub)), outcome(unpub));
  assert.ok(['ABORTED', 'FAILED_PRECONDITION'].includes(outcome(del)), `delete of a staged volume: ${outcome(del)}`);
  await h.client.nodeUnpublishVolume({ volume_id: id, target_path: target }, CALL);
  const unstages = await Promise.allSettled([
    h.client.nodeUnstageVolume({ volume_id: id, staging_target_path: staging }, CALL),
    h.client.nodeUnstageVolume({ volume_id: id, staging_target_path: staging }, CALL),
  ]);
  assert.ok(unstages.map(outcome).every((c) => c === 'OK' || c === 'ABORTED'), unstages.map(outcome).join(', '));
  await h.client.nodeUnstageVolume({ volume_id: id, staging_target_path: staging }, CALL);
  assert.deepEqual(await h.loops(), []);
  assert.deepEqual(await h.mounts(), []);
  await h.client.deleteVolume({ volume_id: id }, CALL);
});

test('DeleteVolume racing NodeStageVolume ends either staged or deleted, never half of each', async () => {
  for (let round = 0; round < 4; round++) {
    const id = (await h.client.createVolume(volumeRequest(`cc-race-${round}`, 16 * MiB), CALL)).volume?.volume_id ?? '';
    const staging = h.stagingPath(`cc-race-${round}`);
    const [st, del] = await Promise.allSettled([
      h.client.nodeStageVolume({ volume_id: id, staging_target_path: staging, volume_capability: fsCap() }, CALL),
      h.client.deleteVolume({ volume_id: id }, CALL),
    ]);
    const listed = (await h.client.listVolumes()).entries.some((e) => e.volume?.volume_id === id);
    if (outcome(del) === 'OK') {
      assert.ok(['ABORTED', 'NOT_FOUND'].includes(outcome(st)), `stage after delete: ${outcome(st)}`);
      assert.equal(listed, false);
      assert.deepEqual(await diskState(h), { files: [], mounts: [], loops: [] }, 'a deleted volume leaves nothing');
    } else {
      assert.ok(['ABORTED', 'FAILED_PRECONDITION'].includes(outcome(del)), `delete: ${outcome(del)}`);
      assert.equal(listed, true);
      if (outcome(st) === 'OK') {
        assert.equal((await mountsAt(staging)).length, 1);
        await h.client.nodeUnstageVolume({ volume_id: id, staging_target_path: staging }, CALL);
      } else {
        assert.equal(outcome(st), 'ABORTED');
      }
      await h.client.deleteVolume({ volume_id: id }, CALL);
    }
    assert.deepEqual(await diskState(h), { files: [], mounts: [], loops: [] });
  }
});

test('calls on different volumes run side by side: 4 concurrent stage+publish all succeed', async () => {
  const ids = await Promise.all([0, 1, 2, 3].map(async (i) => (await h.client.createVolume(volumeRequest(`cc-side-${i}`, 16 * MiB), CALL)).volume?.volume_id ?? ''));
  const results = await Promise.allSettled(ids.map(async (id, i) => {
    await h.client.nodeStageVolume({ volume_id: id, staging_target_path: h.stagingPath(`side-${i}`), volume_capability: fsCap() }, CALL);
    await h.client.nodePublishVolume({ volume_id: id, staging_target_path: h.stagingPath(`side-${i}`), target_path: h.targetPath(`side-${i}`), volume_capability: fsCap() }, CALL);
  }));
  assert.deepEqual(results.map(outcome), ['OK', 'OK', 'OK', 'OK'], 'no lock is shared between volumes');
  assert.equal((await h.loops()).length, 4);
  // Concurrent stats while everything is busy tearing down: answers or a clean NOT_FOUND, never a hang.
  await Promise.all(ids.map(async (id, i) => {
    // allSettled attaches its handlers now, so an early NOT_FOUND is never an unhandled rejection.
    const stats = Promise.allSettled([h.client.nodeGetVolumeStats({ volume_id: id, volume_path: h.targetPath(`side-${i}`) }, CALL)]);
    await h.client.nodeUnpublishVolume({ volume_id: id, target_path: h.targetPath(`side-${i}`) }, CALL);
    await h.client.nodeUnstageVolume({ volume_id: id, staging_target_path: h.stagingPath(`side-${i}`) }, CALL);
    const s = await stats;
    assert.ok(['OK', 'NOT_FOUND'].includes(outcome(s[0]!)), outcome(s[0]!));
    await h.client.deleteVolume({ volume_id: id }, CALL);
  }));
  assert.deepEqual(await diskState(h), { files: [], mounts: [], loops: [] });
  assert.equal(await available(h), POOL);
});
