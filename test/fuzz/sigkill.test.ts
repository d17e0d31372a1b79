// SIGKILL at seeded random instants of full lifecycles: restart, retry the interrupted call until it converges, lose nothing, leak nothing.
import { before, after, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { status } from '@grpc/grpc-js';
import { grpcCode } from '../../src/csi/client.js';
import type * as csi from '../../src/csi/types.js';
import { DriverHarness } from '../helpers/driver-harness.js';
import { available, fsCap, MiB, rawCap } from '../driver/support.js';
import { envInt, fuzzSeed, FuzzRandom } from './fuzz-random.js';
import { volumeDataHash, writeVolumeData } from './volume-data.js';
import { converge } from './converge.js';

const SEED = fuzzSeed();
/** Lifecycles, each killed twice; the CI slice. `LODE_SIGKILL_ROUNDS=500` is the full length (see docs/development.md, "Fuzzing and random kills"). */
const ROUNDS = envInt('LODE_SIGKILL_ROUNDS', 30);
const KILLS_PER_ROUND = 2;
/** Retries of an interrupted call before it counts as not converging (each waits a little for the restarted driver). */
const DATA_BYTES = 512 * 1024;

type Kind = 'xfs' | 'block' | 'inline';

interface Round {
  n: number;
  kind: Kind;
  name: string;
  id: string;
  staging: string;
  target: string;
  bytes: number;
  /** sha256 of what was written through the publication, once it was. */
  hash?: string;
}

type Step = [string, (r: Round) => Promise<unknown>];

let h: DriverHarness;
let capacityAtStart = 0;
let inlineAllowed = false;

const cap = (r: Round): csi.VolumeCapability => (r.kind === 'block' ? rawCap() : fsCap(r.kind === 'inline' ? 'ext4' : 'xfs'));
const dataHash = (r: Round) => volumeDataHash(r.target, r.kind === 'block', DATA_BYTES);

/** The lifecycle of each kind, one CSI call per step (the data write rides on publish's success). */
function stepsOf(kind: Kind, rng: FuzzRandom): Step[] {
  const publishAndWrite = async (r: Round, req: csi.NodePublishVolumeRequest) => {
    await h.client.nodePublishVolume(req);
    if (r.hash === undefined) {
      const data = rng.bytes(DATA_BYTES);
      await writeVolumeData(r.target, r.kind === 'block', data);
      r.hash = createHash('sha256').update(data).digest('hex');
    }
  };
  if (kind === 'inline') {
    const req = (r: Round): csi.NodePublishVolumeRequest => ({
      volume_id: r.id, target_path: r.target, volume_capability: cap(r), volume_context: { 'csi.storage.k8s.io/ephemeral': 'true', size: '32Mi' },
    });
    return [
      ['inline publish', (r) => publishAndWrite(r, req(r))],
      ['inline unpublish', (r) => h.client.nodeUnpublishVolume({ volume_id: r.id, target_path: r.target })],
    ];
  }
  return [
    ['create', async (r) => {
      const res = await h.client.createVolume({ name: r.name, capacity_range: { required_bytes: r.bytes }, volume_capabilities: [cap(r)] });
      r.id = res.volume?.volume_id ?? '';
    }],
    ['stage', (r) => h.client.nodeStageVolume({ volume_id: r.id, staging_target_path: r.staging, volume_capability: cap(r) })],
    ['publish', (r) => publishAndWrite(r, { volume_id: r.id, staging_target_path: r.staging, target_path: r.target, volume_capability: cap(r) })],
    ['controller expand', (r) => h.client.controllerExpandVolume({ volume_id: r.id, capacity_range: { required_bytes: r.bytes + 32 * MiB } })],
    ['node expand', (r) => h.client.nodeExpandVolume({ volume_id: r.id, volume_path: r.target, capacity_range: { required_bytes: r.bytes + 32 * MiB }, volume_capability: cap(r) })],
    ['unpublish', (r) => h.client.nodeUnpublishVolume({ volume_id: r.id, target_path: r.target })],
    ['unstage', (r) => h.client.nodeUnstageVolume({ volume_id: r.id, staging_target_path: r.staging })],
    ['delete', (r) => h.client.deleteVolume({ volume_id: r.id })],
  ];
}


before(async () => {
  h = await DriverHarness.start({ pools: [{ name: 'fast', size: '2Gi', extra: 'inline-max-size=64Mi' }] });
  await fs.mkdir(path.join(h.kubeletDir, 'pods'), { recursive: true });
  capacityAtStart = await available(h);
  // Inline ephemeral volumes may be off unless the pool allows them; the campaign covers them when they are on.
  const probe = { volume_id: 'csi-probe0001', target_path: h.targetPath('inline-probe'), volume_capability: fsCap('ext4'), volume_context: { 'csi.storage.k8s.io/ephemeral': 'true', size: '16Mi' } };
  inlineAllowed = await h.client.nodePublishVolume(probe).then(() => true, () => false);
  if (inlineAllowed) await h.client.nodeUnpublishVolume({ volume_id: probe.volume_id, target_path: probe.target_path });
});

after(async () => {
  await h?.cleanup();
});

test(`SIGKILL at seeded random instants (LODE_FUZZ_SEED=${SEED}) of ${ROUNDS} full lifecycles, twice each: every retry converges, data intact, nothing leaks`, async (t) => {
  const rng = new FuzzRandom(SEED).fork('sigkill');
  const kinds: Kind[] = inlineAllowed ? ['xfs', 'block', 'inline'] : ['xfs', 'block'];
  if (!inlineAllowed) t.diagnostic('inline ephemeral volumes are off in this pool: their rounds are skipped');
  const kills: string[] = [];
  /** Smoothed duration of each step of each kind, in ms. */
  const took = new Map<string, number>();
  let inFlightKills = 0;
  for (let n = 0; n < ROUNDS; n++) {
    const kind = kinds[n % kinds.length] as Kind;
    const r: Round = {
      n, kind, name: `kill-${n}`, id: kind === 'inline' ? `csi-kill${n.toString(16).padStart(8, '0')}` : '',
      staging: h.stagingPath(`kill-${n}`), target: h.targetPath(`kill-${n}`), bytes: kind === 'xfs' ? 320 * MiB : rng.between(16, 64) * MiB,
    };
    const steps = stepsOf(kind, rng);
    // Two calls of each lifecycle are killed (both, for the two-call inline one), each at a seeded
    // fraction of how long that call takes here (measured on the unkilled calls), so most kills
    // land inside the call and some just after its answer. An instant replays as "that far into
    // that call"; the milliseconds follow this machine's speed.
    const victims = new Map<number, number>();
    while (victims.size < Math.min(KILLS_PER_ROUND, steps.length)) {
      const i = rng.int(steps.length);
      if (!victims.has(i)) victims.set(i, rng.next() * 1.2);
    }
    let where = `round ${n} (seed ${SEED}, ${kind})`;
    for (const [i, [name, step]] of steps.entries()) {
      if ((name === 'unpublish' || name === 'inline unpublish') && r.hash !== undefined) {
        assert.equal(await dataHash(r), r.hash, `${where}: data intact before ${name}`);
      }
      const fraction = victims.get(i);
      const key = `${kind} ${name}`;
      if (fraction !== undefined) {
        const delayMs = Math.round(fraction * (took.get(key) ?? 20));
        where = `round ${n} (seed ${SEED}, ${kind}): SIGKILL ${delayMs} ms (${Math.round(fraction * 100)} %) into ${name}`;
        kills.push(where);
        if (process.env.LODE_FUZZ_VERBOSE === '1') console.log(where);
        const inFlight = step(r).then(() => 'answered', (err: unknown) => `failed (${String(status[grpcCode(err) ?? -1] ?? err)})`);
        await new Promise((res) => setTimeout(res, delayMs));
        await h.kill();
        const first = await inFlight;
        if (first !== 'answered') inFlightKills++;
        await h.startProcess();
        // Whatever the first attempt got to do, the same call again must converge.
        await converge(`${where}: retry of ${name} (first attempt ${first})`, () => step(r));
        // What was written before the kill is still there, read through the publication.
        if (r.hash !== undefined && (await h.mounts()).includes(r.target)) {
          assert.equal(await dataHash(r), r.hash, `${where}: data written before the kill changed`);
        }
      } else {
        const started = performance.now();
        await converge(`${where}: ${name}`, () => step(r));
        const ms = performance.now() - started;
        took.set(key, 0.7 * (took.get(key) ?? ms) + 0.3 * ms);
      }
      if (name === 'node expand' || name === 'controller expand') {
        assert.equal(await dataHash(r), r.hash, `${where}: data intact after ${name}`);
      }
      if (name === 'unpublish' || name === 'inline unpublish') r.hash = undefined;
    }
    assert.deepEqual(await h.mounts(), [], `${where}: no mount left`);
    assert.deepEqual(await h.loopsLeftAfterKill(), [], `${where}: no loop device left (one detached while a killed call's tool held it goes at its last close)`);
    assert.deepEqual(await h.poolFiles(), [], `${where}: no image or record left`);
    assert.equal(await available(h), capacityAtStart, `${where}: capacity back to the starting figure`);
    const list = await h.client.listVolumes({});
    assert.equal(list.entries.length, 0, `${where}: no volume listed`);
  }
  t.diagnostic(`${inFlightKills} of ${kills.length} kills landed while the call was in flight; the rest between its answer and the next call`);
  for (const k of kills) t.diagnostic(k);
});
