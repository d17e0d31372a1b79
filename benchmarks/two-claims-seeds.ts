// Scenario 04 over many seeds with Lode's pod reservations off and on: how many runs end with the pod stuck, with a volume left behind, and the CreateVolume attempts its claims took.
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadScenario } from '../src/bench/scenario/scenario-file.js';
import { runScenario } from '../src/bench/scenario/scenario-runner.js';
import type { RunResult } from '../src/bench/scenario/run-result.js';
import { INTERRUPTED, interruptible, type Interrupts } from './interrupts.js';

const SCENARIOS = fileURLToPath(new URL('../../scenarios/', import.meta.url));
const USAGE = 'usage: node dist/benchmarks/two-claims-seeds.js [SEEDS (default 20)] [SCENARIO (default 04-two-claims/scenario-tie.yaml)]\n';

/** What one run says about the two-claim pod. */
export interface SeedOutcome {
  seed: number;
  running: boolean;
  node: string;
  /** PVs not bound to a claim of a Running pod: volumes made for a pod that cannot use them. */
  leftoverVolumes: number;
  /** Bytes allocated in pools of nodes other than the running pod's (all nodes when it is not running). */
  strayBytes: number;
  createVolumeAttempts: number;
  schedulingAttempts: number;
}

export function outcomeOf(seed: number, r: RunResult, pod = 'default/db'): SeedOutcome {
  const p = r.pods.find((x) => x.name === pod);
  const running = p?.phase === 'Running';
  const used = new Set(running ? Object.keys(p?.createVolumeAttempts ?? {}).map((c) => `default/${c}`) : []);
  return {
    seed, running, node: p?.node ?? '',
    leftoverVolumes: r.volumes.filter((v) => !used.has(v.claim)).length,
    strayBytes: r.pools.filter((x) => !running || x.node !== p?.node).reduce((s, x) => s + x.allocatedBytes, 0),
    createVolumeAttempts: Object.values(p?.createVolumeAttempts ?? {}).reduce((a, b) => a + b, 0),
    schedulingAttempts: p?.attempts ?? 0,
  };
}

async function main(): Promise<number> {
  if (typeof process.getuid === 'function' && process.getuid() !== 0) {
    process.stderr.write('the seed comparison needs root: the simulated nodes run real lode drivers (loop devices, mounts)\n');
    return 1;
  }
  const seeds = Number(process.argv[2] ?? '20');
  if (!Number.isInteger(seeds) || seeds < 1) {
    process.stderr.write(USAGE);
    return 2;
  }
  const file = join(SCENARIOS, process.argv[3] ?? '04-two-claims/scenario-tie.yaml');
  const workRoot = resolve(process.env.LODE_BENCH_WORK_DIR ?? '/var/lib/lode/bench');
  mkdirSync(workRoot, { recursive: true });
  process.stdout.write(`${file}, seeds 1..${seeds}\n`);
  const failed = await interruptible('the seed comparison', (stop) => compareSeeds(file, seeds, workRoot, stop));
  if (failed === INTERRUPTED) return 130;
  if (failed > 0) process.stdout.write(`\n${failed} run(s) with teardown problems or controller errors\n`);
  return failed > 0 ? 1 : 0;
}

/** Each seed without and with pod reservations, printed as it goes; returns how many runs had teardown problems or controller errors. */
async function compareSeeds(file: string, seeds: number, workRoot: string, stop: Interrupts): Promise<number> {
  let failed = 0;
  for (const driverApi of [false, true]) {
    const outcomes: SeedOutcome[] = [];
    for (let seed = 1; seed <= seeds; seed++) {
      const scenario = loadScenario(file, undefined, { seed, driverApi });
      const r = await runScenario(scenario, { workDir: join(workRoot, `seeds-${process.pid}-${driverApi ? 'on' : 'off'}-${seed}`), seed, signal: stop.signal, onCluster: stop.onCluster });
      if (r.teardownProblems.length > 0 || r.controllerErrors.length > 0) failed++;
      outcomes.push(outcomeOf(seed, r));
    }
    const stuck = outcomes.filter((o) => !o.running);
    const leftover = outcomes.filter((o) => o.leftoverVolumes > 0 || o.strayBytes !== 0);
    const attempts = outcomes.map((o) => o.createVolumeAttempts);
    process.stdout.write(`\npod reservations ${driverApi ? 'on ' : 'off'}: ${stuck.length} of ${seeds} stuck${stuck.length > 0 ? ` (seeds ${stuck.map((o) => o.seed).join(', ')})` : ''}; ` +
      `${leftover.length} with a volume left behind; CreateVolume attempts per run min ${Math.min(...attempts)}, max ${Math.max(...attempts)}, ` +
      `total ${attempts.reduce((a, b) => a + b, 0)}\n`);
    for (const o of outcomes) {
      process.stdout.write(`  seed ${String(o.seed).padStart(2)}: ${o.running ? `Running on ${o.node}` : 'stuck'}, ${o.createVolumeAttempts} CreateVolume, ${o.schedulingAttempts} scheduling attempt(s), ${o.leftoverVolumes} PV(s) and ${o.strayBytes} bytes left behind\n`);
    }
  }
  return failed;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exitCode = await main();
