// Seeded hostile requests across every RPC: caller codes only, answers within 10 s, nothing outside the roots touched, bounded RSS.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { CsiClient } from '../../src/csi/client.js';
import { methodPaths } from './raw-wire.js';
import { DriverHarness } from '../helpers/driver-harness.js';
import { available, CAP_SYS_RESOURCE, createVolume, fileHash, fsCap, hasCapability, MiB, rawCap, stageAndPublish, teardown, writeRandomFile } from '../driver/support.js';
import { envInt, fuzzSeed } from './fuzz-random.js';
import { groupFailures, HostileRun } from './fuzz-runner.js';
import { GENERATED_RPCS } from './hostile-requests.js';
import type { LiveView } from './fuzz-lifecycle.js';
import { plantLandscape, type PathLandscape } from './path-fixtures.js';
import { diff, foreignMounts, rssBytes, treeSnapshot } from './sandbox-watch.js';

const SEED = fuzzSeed();
/** The CI slice; `LODE_FUZZ_CALLS=20000` is the full length (see docs/development.md, "Fuzzing and random kills"). */
const CALLS = envInt('LODE_FUZZ_CALLS', 2500);
/** Past this many failures the run stops (the report groups them; a hang stops it sooner). */
const MAX_FAILURES = envInt('LODE_FUZZ_MAX_FAILURES', 1000);
/** Long enough that the heap has met the largest inputs (1 MiB strings) a few times before RSS is read. */
const WARMUP = Math.min(500, Math.floor(CALLS / 5));
/**
 * RSS growth allowed from after warm-up to the end. V8's heap grows and shrinks with garbage and
 * 1 MiB inputs pass through large-object space, but a driver that keeps nothing per call and
 * refuses huge fields before any work stays well below this: with the huge inputs left out,
 * 2,500 calls grew it by under 3 MiB here and 20,000 by 12 MiB. Keeping or echoing big inputs
 * crosses it: the unfixed driver grew by 38 to 46 MiB in the CI slice.
 */
const RSS_GROWTH_BOUND = 24 * MiB;
const SIGTERM_BOUND_MS = 10_000;

let h: DriverHarness;
let land: PathLandscape;
let run: HostileRun;
let capacityAtStart = 0;
let rssWarm = 0;
let rssEnd = 0;
let sentinelAtStart: string[] = [];
let mountsAtStart: string[] = [];
let allowed: string[] = [];
/** A volume with data that was published before the run and must come through it intact. */
let keeper: { id: string; target: string; hash: string } | undefined;
/** Staged volumes (filesystem and raw block) the sweep aims every planted path at. */
let anchors: LiveView[] = [];

const repro = `LODE_FUZZ_SEED=${SEED} LODE_FUZZ_CALLS=${CALLS} node --test dist/test/fuzz/hostile.test.js`;

before(async () => {
  // The pools' parent is a second target root, so the pool guard itself must refuse pool paths.
  h = await DriverHarness.start({
    pools: [{ name: 'fast', size: '4Gi', extra: 'inline-max-size=512Mi' }],
    extraArgs: (root) => ['--target-root', path.join(root, 'pools')],
  });
  allowed = [h.kubeletDir, path.join(h.root, 'pools')];
  land = await plantLandscape(h.root, h.kubeletDir, h.pools.map((p) => h.poolDir(p.name)));
  sentinelAtStart = await treeSnapshot(land.sentinel);
  mountsAtStart = await foreignMounts(h.root, allowed);
  capacityAtStart = await available(h);
  const k = await createVolume(h, 'fz-keeper', 16 * MiB);
  const placed = await stageAndPublish(h, k.id, 'fz-keeper');
  keeper = { id: k.id, target: placed.target, hash: await writeRandomFile(path.join(placed.target, 'kept'), MiB) };
  const b = await createVolume(h, 'fz-anchor-block', 16 * MiB, { cap: rawCap() });
  await h.client.nodeStageVolume({ volume_id: b.id, staging_target_path: h.stagingPath('fz-anchor-block'), volume_capability: rawCap() });
  anchors = [
    { id: k.id, name: 'fz-keeper', bytes: k.capacity, inline: false, block: false, staging: placed.staging, target: placed.target, cap: fsCap() },
    { id: b.id, name: 'fz-anchor-block', bytes: b.capacity, inline: false, block: true, staging: h.stagingPath('fz-anchor-block'), target: '', cap: rawCap() },
  ];
  // Inline ephemeral volumes may be off unless the pool allows them; lifecycles use them only when they are on.
  const probe = { volume_id: 'csi-probe0001', target_path: h.targetPath('inline-probe'), volume_capability: fsCap(), volume_context: { 'csi.storage.k8s.io/ephemeral': 'true', size: '16Mi' } };
  const inlineAllowed = await h.client.nodePublishVolume(probe).then(() => true, () => false);
  if (inlineAllowed) await h.client.nodeUnpublishVolume({ volume_id: probe.volume_id, target_path: probe.target_path });
  run = new HostileRun(h, land, {
    seed: SEED, calls: CALLS, maxFailures: MAX_FAILURES, warmupCalls: WARMUP, verbose: process.env.LODE_FUZZ_VERBOSE === '1',
    ext4GrowsOnline: await hasCapability(CAP_SYS_RESOURCE), inlineAllowed, allowedDirs: allowed,
    onWarm: async () => { rssWarm = await rssBytes(h.proc?.pid ?? 0); },
    keep: [{ id: k.id, paths: [placed.staging, placed.target] }, { id: b.id, paths: [h.stagingPath('fz-anchor-block')] }],
  });
});

after(async () => {
  await h?.cleanup();
});

test('the generators cover every RPC the driver serves', () => {
  assert.deepEqual([...GENERATED_RPCS].sort(), [...methodPaths().keys()].sort());
});

test('every planted path (links out, dangling, looping, files in the way, pools, over-long) in every call that takes a path', async (t) => {
  await run.sweep(anchors);
  t.diagnostic(`${run.sweepCalls} calls`);
  assert.equal(run.failures.length, 0,
    `${run.failures.length} failed checks; replay: ${repro}\n${groupFailures(SEED, run.failures).join('\n')}`);
});

test(`hostile calls (LODE_FUZZ_SEED=${SEED}, ${CALLS} calls): only caller codes, each within 10 s, nothing outside the roots touched`, async (t) => {
  const sweepFailures = run.failures.length;
  await run.run();
  rssEnd = await rssBytes(h.proc?.pid ?? 0).catch(() => 0);
  const byCode = [...run.codes.entries()].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k}=${n}`).join(' ');
  t.diagnostic(`sent ${run.sent} calls (${run.clientEncodeErrors} not encodable by the client); slowest ${run.slowestMs.toFixed(0)} ms (${run.slowestCall}); lifecycles completed ${run.lifecycles.completed}, steps refused ${run.lifecycles.stepFailures.length}`);
  t.diagnostic(`codes: ${byCode}`);
  const failures = run.failures.slice(sweepFailures);
  assert.equal(failures.length, 0,
    `${failures.length} failed checks${run.stoppedEarly ? ` (run stopped early after ${run.sent} calls)` : ''}; replay: ${repro}\n${groupFailures(SEED, failures).join('\n')}`);
});

test('the volume published before the run kept its data', async () => {
  assert.ok(keeper);
  assert.equal(await fileHash(path.join(keeper.target, 'kept')), keeper.hash);
});

test('everything the run placed comes off through CSI: no mount, loop device, image or record left, capacity back', async (t) => {
  const c = new CsiClient(h.endpoint, 60_000);
  h.client.close();
  h.client = c;
  let problems: string[] = [];
  const attempt = async (what: string, call: Promise<unknown>) => {
    try {
      await call;
    } catch (err) {
      problems.push(`${what}: ${String((err as { details?: unknown }).details ?? err).slice(0, 200)}`);
    }
  };
  // Each placement once, at its first time; then latest first, as a node drains (a mount made
  // later may lie below one made earlier). A second pass picks up what an order still blocked.
  const seen = new Set<string>();
  const placements = run.placements.filter((p) => { const k = `${p.kind} ${p.volumeId} ${p.path}`; const fresh = !seen.has(k); seen.add(k); return fresh; }).reverse();
  const block = anchors.find((a) => a.block);
  for (let pass = 0; pass < 2; pass++) {
    problems = [];
    if (keeper) {
      await attempt('unpublish the keeper', c.nodeUnpublishVolume({ volume_id: keeper.id, target_path: keeper.target }));
      await attempt('unstage the keeper', c.nodeUnstageVolume({ volume_id: keeper.id, staging_target_path: h.stagingPath('fz-keeper') }));
    }
    if (block) await attempt('unstage the block anchor', c.nodeUnstageVolume({ volume_id: block.id, staging_target_path: block.staging }));
    for (const p of placements) {
      const what = `${p.kind === 'publish' ? 'unpublish' : 'unstage'} ${p.volumeId} ${p.path.slice(0, 80)}`;
      await attempt(what, p.kind === 'publish'
        ? c.nodeUnpublishVolume({ volume_id: p.volumeId, target_path: p.path })
        : c.nodeUnstageVolume({ volume_id: p.volumeId, staging_target_path: p.path }));
    }
    for (const e of (await c.listSnapshots({})).entries) await attempt(`delete snapshot ${e.snapshot?.snapshot_id}`, c.deleteSnapshot({ snapshot_id: e.snapshot?.snapshot_id ?? '' }));
    const list = await c.listVolumes({});
    for (const e of list.entries) await attempt(`delete ${e.volume?.volume_id}`, c.deleteVolume({ volume_id: e.volume?.volume_id ?? '' }));
  }
  // A refusal alone can be right (an unpublish that will not remove a directory with content);
  // what must hold is that nothing of the driver's stays behind.
  if (problems.length > 0) t.diagnostic(`refused in the last pass:\n${problems.join('\n')}`);
  const context = problems.length > 0 ? `; refused in the last pass:\n${problems.slice(0, 20).join('\n')}` : '';
  assert.deepEqual(await h.mounts(), [], `no mount left under the harness${context}`);
  assert.deepEqual(await h.loops(), [], `no loop device left${context}`);
  assert.deepEqual(await h.poolFiles(), [], `no image or record left${context}`);
  assert.equal(await available(h), capacityAtStart, `capacity back to the starting figure${context}`);
  assert.deepEqual(diff(sentinelAtStart, await treeSnapshot(land.sentinel)), { added: [], removed: [] }, 'sentinel tree unchanged');
  assert.deepEqual(diff(mountsAtStart, await foreignMounts(h.root, allowed)), { added: [], removed: [] }, 'no mount appeared or vanished outside the roots');
});

test(`the driver's RSS grew by at most ${RSS_GROWTH_BOUND / MiB} MiB from warm-up to the end`, (t) => {
  t.diagnostic(`RSS after warm-up ${(rssWarm / MiB).toFixed(1)} MiB, at the end ${(rssEnd / MiB).toFixed(1)} MiB`);
  assert.ok(rssWarm > 0 && rssEnd > 0, 'RSS was read');
  assert.ok(rssEnd - rssWarm <= RSS_GROWTH_BOUND, `RSS grew by ${((rssEnd - rssWarm) / MiB).toFixed(1)} MiB`);
});

test('afterwards the driver answers Probe and serves a full valid lifecycle', async () => {
  const probe = await h.client.probe({}, { timeoutMs: 10_000 });
  assert.equal(probe.ready?.value, true);
  const before = { mounts: await h.mounts(), loops: await h.loops(), files: await h.poolFiles() };
  const v = await createVolume(h, 'fz-after', 32 * MiB);
  const placed = await stageAndPublish(h, v.id, 'fz-after', fsCap());
  const hash = await writeRandomFile(path.join(placed.target, 'x'), MiB);
  assert.equal(await fileHash(path.join(placed.target, 'x')), hash);
  const stats = await h.client.nodeGetVolumeStats({ volume_id: v.id, volume_path: placed.target });
  assert.ok(stats.usage.length > 0);
  await teardown(h, v.id, 'fz-after');
  // Compared with before, not with nothing: an earlier failed check may have left its traces.
  assert.deepEqual({ mounts: await h.mounts(), loops: await h.loops(), files: await h.poolFiles() }, before);
});

test(`the driver exits on SIGTERM within ${SIGTERM_BOUND_MS / 1000} s`, async () => {
  const proc = h.proc;
  assert.ok(proc && proc.exitCode === null && proc.signalCode === null, 'the driver is running');
  h.client.close();
  let timer: NodeJS.Timeout | undefined;
  const exited = await Promise.race([
    new Promise<boolean>((resolve) => { proc.once('exit', () => resolve(true)); proc.kill('SIGTERM'); }),
    new Promise<boolean>((resolve) => { timer = setTimeout(() => resolve(false), SIGTERM_BOUND_MS); }),
  ]);
  clearTimeout(timer);
  if (!exited) await h.kill();
  assert.ok(exited, 'the driver was still running after SIGTERM');
});
