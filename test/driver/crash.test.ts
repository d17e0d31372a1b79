// Crash safety: SIGKILL the driver between any two steps of a call, restart, retry, and check nothing leaks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { LIFECYCLE_FAILPOINTS } from '../conformance/crash-points.js';
import { DriverHarness, MiB, mountCap } from '../helpers/driver-harness.js';

const POOL_BYTES = 1024 * MiB;
// xfs, because it grows online with the capabilities every root container has; online ext4
// growth also needs CAP_SYS_RESOURCE, which some sandboxes (this CI's among them) withhold.
const XFS = mountCap('xfs');

interface Lifecycle {
  h: DriverHarness;
  volumeId: string;
  staging: string;
  target: string;
}

type Step = (l: Lifecycle) => Promise<void>;

const STEPS: Array<[string, Step]> = [
  ['create', async (l) => {
    const res = await l.h.client.createVolume({ name: 'pvc-crash', capacity_range: { required_bytes: 320 * MiB }, volume_capabilities: [XFS] });
    l.volumeId = res.volume?.volume_id ?? '';
  }],
  ['stage', async (l) => { await l.h.client.nodeStageVolume({ volume_id: l.volumeId, staging_target_path: l.staging, volume_capability: XFS }); }],
  ['publish', async (l) => {
    await l.h.client.nodePublishVolume({ volume_id: l.volumeId, staging_target_path: l.staging, target_path: l.target, volume_capability: XFS });
    await fs.writeFile(path.join(l.target, 'data'), 'kept across crashes');
  }],
  ['expand', async (l) => {
    await l.h.client.controllerExpandVolume({ volume_id: l.volumeId, capacity_range: { required_bytes: 400 * MiB } });
    await l.h.client.nodeExpandVolume({ volume_id: l.volumeId, volume_path: l.target, capacity_range: { required_bytes: 400 * MiB } });
    const after = await fs.statfs(l.target);
    // xfs keeps ~64 MiB of a 320 MiB volume for itself (df shows ~256 MiB); grown to 400 MiB it shows ~336 MiB.
    assert.ok(after.blocks * after.bsize > 320 * MiB, `filesystem grew (now ${after.blocks * after.bsize} bytes)`);
    assert.equal(await fs.readFile(path.join(l.target, 'data'), 'utf8'), 'kept across crashes');
  }],
  ['unpublish', async (l) => { await l.h.client.nodeUnpublishVolume({ volume_id: l.volumeId, target_path: l.target }); }],
  ['unstage', async (l) => { await l.h.client.nodeUnstageVolume({ volume_id: l.volumeId, staging_target_path: l.staging }); }],
  ['delete', async (l) => { await l.h.client.deleteVolume({ volume_id: l.volumeId }); }],
];


/**
 * Waits for the driver to die at the armed failpoint and checks it was the failpoint's SIGKILL
 * that ended it: a call that merely failed (a refused request, a bug) leaves the process alive,
 * and would otherwise pass for a crash that never happened.
 */
async function diedAtFailpoint(h: DriverHarness, point: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const gone = await Promise.race([
    h.exited().then(() => true),
    new Promise<boolean>((resolve) => { timer = setTimeout(() => resolve(false), 10_000); }),
  ]);
  clearTimeout(timer);
  assert.ok(gone, `the driver is still running: failpoint ${point} never fired`);
  assert.equal(h.proc?.signalCode, 'SIGKILL', `the driver ended by ${h.proc?.signalCode ?? `exit ${h.proc?.exitCode}`}, not by failpoint ${point}`);
}

/**
 * What lets the next start tell an interrupted create or delete from data it must keep: no
 * instant of a call leaves an image without its record (start-up deletes only what a record
 * proves to be an unfinished create or delete, and quarantines the rest).
 */
async function assertEveryImageRecorded(h: DriverHarness): Promise<void> {
  const files = await h.poolFiles();
  for (const f of files.filter((name) => name.endsWith('.img'))) {
    assert.ok(files.includes(f.replace(/\.img$/, '.json')), `image ${f} has a record (pool holds ${files.join(', ')})`);
  }
}

async function assertNothingLeft(h: DriverHarness): Promise<void> {
  assert.deepEqual(await h.mounts(), [], 'no mounts left');
  assert.deepEqual(await h.loops(), [], 'no loop devices left');
  assert.deepEqual(await h.poolFiles(), [], 'no image, record or temp file left');
  const cap = await h.client.getCapacity({ parameters: { pool: 'fast' } });
  assert.equal(Number(cap.available_capacity), POOL_BYTES, 'all capacity back');
  const list = await h.client.listVolumes({});
  assert.equal(list.entries.length, 0);
}

// The conformance suite's list (each failpoint with the step it interrupts), which every backend passes through.
for (const [point, stepName] of LIFECYCLE_FAILPOINTS) {
  test(`SIGKILL at ${point}: restart, retry ${stepName}, finish the lifecycle, nothing leaks`, async () => {
    const h = await DriverHarness.start({ pools: [{ name: 'fast', size: '1Gi' }] }, { LODE_FAILPOINT: point });
    const l: Lifecycle = { h, volumeId: '', staging: h.stagingPath('crash'), target: h.targetPath('crash') };
    await fs.mkdir(path.dirname(l.target), { recursive: true });
    try {
      let crashed = false;
      for (const [name, step] of STEPS) {
        if (name === stepName && !crashed) {
          await assert.rejects(step(l), `the ${name} call dies with the driver`);
          await diedAtFailpoint(h, point);
          await assertEveryImageRecorded(h);
          crashed = true;
          await h.startProcess();
        }
        await step(l); // for the interrupted step this is the retry, which must converge
      }
      assert.ok(crashed, 'the failpoint fired');
      await assertNothingLeft(h);
    } finally {
      await h.cleanup();
    }
  });
}

test('SIGKILL between a publish\'s bind mount and its record: kubelet\'s retry stages again, then publishes, and the lifecycle finishes', async () => {
  // The random campaign below found it under load: the unrecorded bind at the target looked like a
  // mount carried off by a renamed directory, and the retried stage refused it for good.
  const h = await DriverHarness.start({ pools: [{ name: 'fast', size: '1Gi' }] }, { LODE_FAILPOINT: 'publish:mounted' });
  const l: Lifecycle = { h, volumeId: '', staging: h.stagingPath('restage'), target: h.targetPath('restage') };
  await fs.mkdir(path.dirname(l.target), { recursive: true });
  try {
    const steps = new Map(STEPS);
    await steps.get('create')!(l);
    await steps.get('stage')!(l);
    await assert.rejects(steps.get('publish')!(l), 'the publish dies with the driver');
    await diedAtFailpoint(h, 'publish:mounted');
    await h.startProcess();
    for (const [name, step] of STEPS) if (name !== 'expand') await step(l);
    await assertNothingLeft(h);
  } finally {
    await h.cleanup();
  }
});

test('SIGKILL during an inline ephemeral publish and unpublish: retries converge, nothing leaks', async () => {
  const attrs = { 'csi.storage.k8s.io/ephemeral': 'true', size: '32Mi' };
  for (const point of ['create:recorded', 'create:allocated', 'inline:mounted', 'unpublish:unmounted']) {
    const h = await DriverHarness.start({ pools: [{ name: 'fast', size: '1Gi', extra: 'inline-max-size=64Mi' }] }, { LODE_FAILPOINT: point });
    const target = h.targetPath('inline');
    await fs.mkdir(path.dirname(target), { recursive: true });
    const req = { volume_id: 'csi-0123abcd', target_path: target, volume_capability: mountCap(), volume_context: attrs };
    try {
      if (point === 'unpublish:unmounted') {
        await h.client.nodePublishVolume(req);
        await assert.rejects(h.client.nodeUnpublishVolume({ volume_id: req.volume_id, target_path: target }));
        await diedAtFailpoint(h, point);
        await h.startProcess();
      } else {
        await assert.rejects(h.client.nodePublishVolume(req));
        await diedAtFailpoint(h, point);
        await assertEveryImageRecorded(h);
        await h.startProcess();
        // The interrupted create was rolled back at start; kubelet's retry makes it anew.
        await h.client.nodePublishVolume(req);
        await fs.writeFile(path.join(target, 'x'), 'y');
      }
      await h.client.nodeUnpublishVolume({ volume_id: req.volume_id, target_path: target });
      await assertNothingLeft(h);
    } finally {
      await h.cleanup();
    }
  }
});

/** A small deterministic PRNG so a failing run can be replayed. */
function mulberry32(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

test('SIGKILL at random instants of whole lifecycles: rerunning the lifecycle always converges', async () => {
  const rand = mulberry32(20261129);
  const h = await DriverHarness.start({ pools: [{ name: 'fast', size: '1Gi' }] });
  const l: Lifecycle = { h, volumeId: '', staging: h.stagingPath('rnd'), target: h.targetPath('rnd') };
  await fs.mkdir(path.dirname(l.target), { recursive: true });
  try {
    for (let round = 0; round < 8; round++) {
      const delayMs = Math.floor(rand() * 400);
      const run = (async () => { for (const [, step] of STEPS) await step(l); })();
      const timer = new Promise<void>((r) => setTimeout(r, delayMs));
      await Promise.race([run.catch(() => undefined), timer]);
      await h.kill();
      await run.catch(() => undefined);
      await assertEveryImageRecorded(h);
      await h.startProcess();
      // Kubernetes keeps retrying from where it stands; the simplest honest model is to
      // replay the whole lifecycle, every call of which must be idempotent.
      for (const [name, step] of STEPS) {
        if (name === 'expand') continue; // a second expand to the same size is covered by idempotency tests
        await step(l);
      }
      await assertNothingLeft(h);
    }
  } finally {
    await h.cleanup();
  }
});
