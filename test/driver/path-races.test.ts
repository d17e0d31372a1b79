// A hostile user racing the target paths while stages, publishes and unpublishes run: every answer is a caller's code, nothing outside the root changes, and everything comes off again.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { fork } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DriverHarness } from '../helpers/driver-harness.js';
import { readMountTable } from '../../src/sys/mounts.js';
import { grpcCode } from '../../src/csi/client.js';
import type * as csi from '../../src/csi/types.js';
import { DEFAULT_FUZZ_SEED, envInt, FuzzRandom } from '../fuzz/fuzz-random.js';
import { aside, entry, homeOf, setUpSlots, type RacerArgs, type RacerReport } from './path-racer.js';
import { createVolume, fsCap, MiB, rawCap, status, tree } from './support.js';

/** Publishes in all (split between a filesystem and a raw block volume); a stage cycle runs beside every tenth. */
const ROUNDS = envInt('LODE_PATH_RACE_ROUNDS', 200);
const SEED = envInt('LODE_PATH_RACE_SEED', DEFAULT_FUZZ_SEED);
const SLOTS = 3;
/** What a lost race may answer: the path's shape, its state, a conflict to retry. Never INTERNAL or UNKNOWN. */
const ALLOWED = ['OK', 'INVALID_ARGUMENT', 'ABORTED', 'FAILED_PRECONDITION', 'ALREADY_EXISTS'];

let h: DriverHarness;
let outside: string;

/** Mount points below the harness's directory that are not below the target root. */
async function mountsOutsideRoot(): Promise<string[]> {
  return (await h.mounts()).filter((m) => m !== h.kubeletDir && !m.startsWith(h.kubeletDir + '/'));
}

before(async () => {
  h = await DriverHarness.start({ pools: [{ name: 'fast', size: '512Mi' }] });
  outside = path.join(h.root, 'outside');
  await fs.mkdir(path.join(outside, 'nested'), { recursive: true });
  await fs.writeFile(path.join(outside, 'precious'), 'keep');
  await fs.writeFile(path.join(outside, 'nested', 'also-precious'), 'keep');
});
after(async () => {
  await h?.cleanup();
});

/** Outcome counts per call, with the first message of each code that is not OK. */
class Tally {
  readonly counts = new Map<string, number>();
  readonly samples = new Map<string, string>();
  readonly kinds = new Map<string, number>();

  async run(what: string, call: Promise<unknown>): Promise<boolean> {
    let name = 'OK';
    try {
      await call;
    } catch (err) {
      const code = grpcCode(err);
      name = code === undefined ? `not gRPC: ${String(err)}` : status[code] ?? String(code);
      const key = `${what} ${name}`;
      const details = String((err as { details?: unknown }).details ?? err);
      if (!this.samples.has(key)) this.samples.set(key, details);
      // The same refusal at any path counts as one kind: what the lost races answered, and how often.
      const kind = `${name}: ${details.replace(/"?\/[^\s",;:]*"?/g, 'P').replace(/lv-[0-9a-f]+\.[\w-]+/g, 'V')}`;
      this.kinds.set(kind, (this.kinds.get(kind) ?? 0) + 1);
    }
    const key = `${what} ${name}`;
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
    return name === 'OK';
  }

  count(code: string): number {
    let n = 0;
    for (const [k, v] of this.counts) if (k.endsWith(` ${code}`)) n += v;
    return n;
  }

  bad(): string[] {
    return [...this.counts.keys()].filter((k) => !ALLOWED.includes(k.slice(k.indexOf(' ') + 1)));
  }
}

test(`publishes, unpublishes and stages at paths a racer keeps swapping answer no INTERNAL and touch nothing outside the root (seed ${SEED}, ${ROUNDS} publishes)`, async (t) => {
  const started = Date.now();
  const fsVol = await createVolume(h, 'race-fs', 16 * MiB);
  const blockVol = await createVolume(h, 'race-block', 16 * MiB, { cap: rawCap() });
  const stageVol = await createVolume(h, 'race-stage', 16 * MiB);
  const fsStaging = h.stagingPath('race-fs');
  const blockStaging = h.stagingPath('race-block');
  await h.client.nodeStageVolume({ volume_id: fsVol.id, staging_target_path: fsStaging, volume_capability: fsCap() });
  await h.client.nodeStageVolume({ volume_id: blockVol.id, staging_target_path: blockStaging, volume_capability: rawCap() });

  const raceDir = path.join(h.kubeletDir, 'pods', 'race');
  const args: RacerArgs = { seed: SEED, raceDir, slots: SLOTS, outside, pool: h.poolDir('fast'), inside: path.join(h.kubeletDir, 'pods', 'elsewhere') };
  setUpSlots(args);
  const outsideBefore = await tree(outside);
  const poolBefore = await tree(h.poolDir('fast'));

  const rnd = new FuzzRandom(SEED).fork('calls');
  /** Targets in slot k: the raced component itself, an entry below it, and one two levels below. */
  const targetIn = (r: FuzzRandom, k: number, leaf: string) => r.pick([
    path.join(raceDir, `s${k}`), path.join(raceDir, `s${k}`, `${leaf}${r.int(3)}`), path.join(raceDir, `s${k}`, 'sub', `${leaf}${r.int(3)}`),
  ]);
  const used = new Set<string>();
  const tally = new Tally();

  const racerFile = fileURLToPath(new URL('./path-racer.js', import.meta.url));
  const racer = fork(racerFile, [JSON.stringify(args)], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const report = new Promise<RacerReport>((resolve, reject) => {
    racer.once('message', (m) => resolve(m as RacerReport));
    racer.once('exit', (code) => reject(new Error(`the racer exited (${code}) before reporting`)));
  });

  const publishLane = async (r: FuzzRandom, rounds: number, id: string, staging: string, cap: () => csi.VolumeCapability, kind: string) => {
    for (let i = 0; i < rounds; i++) {
      const target = targetIn(r, r.int(SLOTS), 't');
      used.add(target);
      const readonly = r.chance(0.25);
      const ok = await tally.run(`${kind}-publish`, h.client.nodePublishVolume({ volume_id: id, staging_target_path: staging, target_path: target, volume_capability: cap(), readonly }));
      if (ok || r.chance(0.3)) await tally.run(`${kind}-unpublish`, h.client.nodeUnpublishVolume({ volume_id: id, target_path: target }));
    }
  };
  const stageLane = async (r: FuzzRandom, rounds: number) => {
    for (let i = 0; i < rounds; i++) {
      const staging = targetIn(r, r.int(SLOTS), 'st');
      used.add(staging);
      const ok = await tally.run('stage', h.client.nodeStageVolume({ volume_id: stageVol.id, staging_target_path: staging, volume_capability: fsCap() }));
      if (ok || r.chance(0.3)) await tally.run('unstage', h.client.nodeUnstageVolume({ volume_id: stageVol.id, staging_target_path: staging }));
    }
  };
  let racerReport: RacerReport;
  try {
    await Promise.all([
      publishLane(rnd.fork('fs'), Math.ceil(ROUNDS / 2), fsVol.id, fsStaging, () => fsCap(), 'fs'),
      publishLane(rnd.fork('block'), Math.floor(ROUNDS / 2), blockVol.id, blockStaging, () => rawCap(), 'block'),
      stageLane(rnd.fork('stage'), Math.ceil(ROUNDS / 10)),
    ]);
  } finally {
    racer.send('stop');
    racerReport = await report;
  }
  const racedFor = Date.now() - started;

  const summary = [...tally.counts].sort().map(([k, v]) => `${k}: ${v}`).join(', ');
  t.diagnostic(`seed ${SEED}: ${racerReport.steps} racer steps in ${racedFor} ms; ${summary}`);
  for (const [k, m] of tally.samples) t.diagnostic(`${k}: ${m}`);
  for (const [k, n] of [...tally.kinds].sort((a, b) => b[1] - a[1])) t.diagnostic(`${n} x ${k}`);

  // Nothing escaped, whatever the answers were.
  assert.deepEqual(await mountsOutsideRoot(), [], 'no mount outside the target root');
  assert.deepEqual(await tree(outside), outsideBefore, 'nothing appeared or disappeared outside the target root');
  assert.deepEqual(await tree(h.poolDir('fast')), poolBefore, 'nothing appeared or disappeared in the pool');
  t.diagnostic(`mounts after the race: ${(await h.mounts()).map((m) => path.relative(h.kubeletDir, m)).join(' ')}`);
  for (let k = 0; k < SLOTS; k++) {
    assert.equal(await fs.readFile(path.join(homeOf(args, k), 'keep'), 'utf8'), `slot ${k}`, `slot ${k}'s file of someone's is still there`);
  }

  // Everything comes off through CSI: first every path used, as the CO would; then, once the
  // user has put the home directories back (with the mounts the racer carried off in them),
  // every path again; then whatever is left, by its mount point (mounts reached through a link
  // into the root).
  const sweepUsed = async () => {
    for (const p of used) {
      await h.client.nodeUnpublishVolume({ volume_id: fsVol.id, target_path: p }).catch(() => undefined);
      await h.client.nodeUnpublishVolume({ volume_id: blockVol.id, target_path: p }).catch(() => undefined);
      await h.client.nodeUnstageVolume({ volume_id: stageVol.id, staging_target_path: p }).catch(() => undefined);
    }
  };
  await sweepUsed();
  for (const k of racerReport.unrestored) {
    const e = entry(args, k);
    assert.deepEqual((await h.mounts()).filter((m) => m.startsWith(e + '/') || m === e), [], `nothing is mounted in slot ${k}'s stand-in once its paths are unpublished`);
    await fs.rm(e, { recursive: true, force: true });
    await fs.rename(aside(args, k), e);
  }
  await sweepUsed();
  let carried = 0;
  for (const m of await h.mounts()) {
    if (m === fsStaging) continue;
    carried++;
    const why: string[] = [];
    const note = (e: unknown) => { why.push(String((e as { details?: unknown }).details ?? e)); };
    for (const id of [fsVol.id, blockVol.id]) await h.client.nodeUnpublishVolume({ volume_id: id, target_path: m }).catch(note);
    await h.client.nodeUnstageVolume({ volume_id: stageVol.id, staging_target_path: m }).catch(note);
    const e = (await readMountTable()).filter((x) => x.mountPoint === m).map((x) => `${x.fsType} ${x.source} ${x.root} ${x.devId}`);
    t.diagnostic(`left at ${path.relative(h.kubeletDir, m)} (${e.join('; ')}): ${why.join(' | ')}`);
  }
  t.diagnostic(`${racerReport.unrestored.length} slot(s) restored after the racer stopped; ${carried} mount(s) left only by mount point`);
  assert.deepEqual(await h.mounts(), [fsStaging], 'only the filesystem volume\'s staging mount is left (a raw block stage mounts nothing)');
  await h.client.nodeUnstageVolume({ volume_id: fsVol.id, staging_target_path: fsStaging });
  await h.client.nodeUnstageVolume({ volume_id: blockVol.id, staging_target_path: blockStaging });
  for (const v of [fsVol, blockVol, stageVol]) await h.client.deleteVolume({ volume_id: v.id });
  assert.deepEqual(await h.mounts(), [], 'no mount left');
  assert.deepEqual(await h.loops(), [], 'no loop device left');

  assert.deepEqual(tally.bad(), [], `answers other than ${ALLOWED.join(', ')} (seed ${SEED}): ${summary}`);
  assert.ok(tally.count('OK') > 0, 'some calls got through: the race left room to work');
});
