// Conformance under crashes: SIGKILL at each failpoint of the volume lifecycle, restart, retry the call, finish; nothing leaks.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { fileHash, fsCap, writeRandomFile } from '../driver/support.js';
import { assertEveryStorageRecorded, assertNothingLeft, assertStorageMatchesRecords, nodeExpand, sizeFor, snapshot, startDriver, type Conformance } from './checks.js';
import type { BackendFixture } from './fixture.js';
import { scaledDeadlineMs } from '../helpers/vm-slowdown.js';

/** Every failpoint of the lifecycle, with the step whose call it interrupts. */
export const LIFECYCLE_FAILPOINTS: ReadonlyArray<readonly [string, StepName]> = [
  ['create:recorded', 'create'],
  ['create:allocated', 'create'],
  ['create:finished', 'create'],
  ['stage:attached', 'stage'],
  ['stage:formatted', 'stage'],
  ['stage:mounted', 'stage'],
  ['publish:mounted', 'publish'],
  ['expand:grown', 'expand'],
  ['unpublish:unmounted', 'unpublish'],
  ['unstage:unmounted', 'unstage'],
  ['unstage:detached', 'unstage'],
  ['delete:marked', 'delete'],
  ['delete:released', 'delete'],
  ['delete:unrecorded', 'delete'],
];

type StepName = 'create' | 'stage' | 'publish' | 'expand' | 'unpublish' | 'unstage' | 'delete';

interface Run {
  c: Conformance;
  size: number;
  volumeId: string;
  hash: string;
}

const TAG = 'crash';
const DATA = 'kept-across-crashes';

/** Each step is one call as a CO would retry it: converging from wherever the last attempt stopped. */
const STEPS: ReadonlyArray<readonly [StepName, (r: Run) => Promise<void>]> = [
  ['create', async (r) => {
    const res = await r.c.h.client.createVolume({ name: 'conf-crash', capacity_range: { required_bytes: r.size }, volume_capabilities: [fsCap(r.c.fsType)] });
    r.volumeId = res.volume?.volume_id ?? '';
    assert.notEqual(r.volumeId, '');
  }],
  ['stage', async (r) => {
    await r.c.h.client.nodeStageVolume({ volume_id: r.volumeId, staging_target_path: r.c.h.stagingPath(TAG), volume_capability: fsCap(r.c.fsType) });
  }],
  ['publish', async (r) => {
    await r.c.h.client.nodePublishVolume({
      volume_id: r.volumeId, staging_target_path: r.c.h.stagingPath(TAG), target_path: r.c.h.targetPath(TAG), volume_capability: fsCap(r.c.fsType),
    });
    // Written once: a retried publish must find it, not an empty volume.
    if (r.hash === '') r.hash = await writeRandomFile(path.join(r.c.h.targetPath(TAG), DATA), 1 << 20);
  }],
  ['expand', async (r) => {
    const to = r.size * 2;
    await r.c.h.client.controllerExpandVolume({ volume_id: r.volumeId, capacity_range: { required_bytes: to } });
    // No restage here: that would pass the unpublish and unstage failpoints before their own steps.
    await nodeExpand(r.c, r.volumeId, TAG, to, fsCap(r.c.fsType), false);
    assert.equal(await fileHash(path.join(r.c.h.targetPath(TAG), DATA)), r.hash, 'the data is intact after the growth');
  }],
  ['unpublish', async (r) => { await r.c.h.client.nodeUnpublishVolume({ volume_id: r.volumeId, target_path: r.c.h.targetPath(TAG) }); }],
  ['unstage', async (r) => { await r.c.h.client.nodeUnstageVolume({ volume_id: r.volumeId, staging_target_path: r.c.h.stagingPath(TAG) }); }],
  ['delete', async (r) => { await r.c.h.client.deleteVolume({ volume_id: r.volumeId }); }],
];

/**
 * Whether the driver died by the failpoint's SIGKILL: a call that merely failed leaves the
 * process alive, and would otherwise pass for a crash that never happened.
 */
export async function diedAtFailpoint(c: Conformance, point: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const gone = await Promise.race([
    c.h.exited().then(() => true),
    new Promise<boolean>((resolve) => { timer = setTimeout(() => resolve(false), scaledDeadlineMs(10_000)); }),
  ]);
  clearTimeout(timer);
  assert.ok(gone, `the call failed but the driver is still running: failpoint ${point} did not fire`);
  assert.equal(c.h.proc?.signalCode, 'SIGKILL', `the driver ended by ${c.h.proc?.signalCode ?? `exit ${c.h.proc?.exitCode}`}, not by failpoint ${point}`);
}

type Guard = (body: (t: TestContext) => Promise<void>) => (t: TestContext) => Promise<void>;

/** One test per failpoint: one driver started with it armed, one restart without it. */
export function registerCrashPoints(fixture: BackendFixture, guarded: Guard, only?: readonly string[], label = ''): void {
  const unknown = (only ?? []).filter((p) => !LIFECYCLE_FAILPOINTS.some(([point]) => point === p));
  // A misspelt point would otherwise just test nothing.
  if (unknown.length > 0) throw new Error(`no such lifecycle failpoint: ${unknown.join(', ')}`);
  for (const [point, stepName] of LIFECYCLE_FAILPOINTS) {
    if (only !== undefined && !only.includes(point)) continue;
    test(`every crash point: SIGKILL at ${point}, restart, retry ${stepName}, finish; no storage without a record, nothing left${label}`, guarded(async (t) => {
      const c = await startDriver(t, fixture, { extraArgs: ['--controller-expansion'], env: { LODE_FAILPOINT: point } });
      const before = await snapshot(c);
      const r: Run = { c, size: await sizeFor(c, c.fsType), volumeId: '', hash: '' };
      let fired = false;
      for (const [name, step] of STEPS) {
        if (name === stepName) {
          try {
            await step(r);
          } catch (err) {
            await diedAtFailpoint(r.c, point).catch((why: unknown) => {
              throw new Error(`${(why as Error).message}; the ${name} call failed with: ${(err as Error).message}`);
            });
            fired = true;
            await assertEveryStorageRecorded(c);
            await c.h.startProcess();
            await step(r); // the retry, which must converge
            await assertStorageMatchesRecords(c);
          }
          continue;
        }
        await step(r);
      }
      const reached = !fixture.failpointsNotReached.includes(point);
      assert.equal(fired, reached, reached ? `failpoint ${point} never fired on ${fixture.name}: its step completed` : `failpoint ${point} fired, though the fixture says ${fixture.name} never reaches it`);
      await assertEveryStorageRecorded(c);
      await assertNothingLeft(c, before);
    }));
  }
}
