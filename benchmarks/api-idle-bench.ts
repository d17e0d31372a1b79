// `npm run bench` part: the API requests per node per idle minute of Lode's drivers with API access (as deploy/base runs them, and with node-loss on) against csi-provisioner's, in the cluster bench at a few node counts.
import { mkdirSync } from 'node:fs';
import * as os from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkInlineObjects, loadManifests, UnmodelledFields } from '../src/bench/manifests/load-manifests.js';
import { runScenario } from '../src/bench/scenario/scenario-runner.js';
import type { Scenario } from '../src/bench/scenario/scenario-file.js';
import type { RequestCount } from '../src/bench/api/request-counts.js';
import { benchNodes } from './bench-nodes.js';
import { INTERRUPTED, interruptible, type Interrupts } from './interrupts.js';
import { CAPACITY_POLL_MS } from '../src/bench/controllers/capacity-publisher.js';

const DEPLOY = fileURLToPath(new URL('../../deploy/base/', import.meta.url));

/** The idle window measured: long enough for every periodic look of the driver (the leader's 10 s passes, renewals) to come round several times. */
const IDLE_MS = Number(process.env.LODE_API_IDLE_MS ?? 120_000);

const IDLE_START = 'idle start';
const IDLE_END = 'idle end';

/**
 * What the drivers run with: `base`, deploy/base's DaemonSet as it is (API access, node-loss
 * handling off, so no feature is leader-elected); `node-loss`, with deploy/components/node-loss's
 * handler on, whose leader election and caches then run too.
 */
type Config = 'base' | 'node-loss';

function scenario(count: number, config: Config): Scenario {
  const u = new UnmodelledFields();
  return {
    name: `api-idle-${config}-${count}`,
    provisioning: 'distributed',
    description: '',
    file: 'bench/api-idle-bench.ts',
    seed: 1,
    capacityPollMs: CAPACITY_POLL_MS,
    // The DaemonSet's drivers; with node-loss handling on as deploy/components/node-loss turns
    // it on, every API feature runs, leader elections included.
    driverApi: true,
    driverFlags: config === 'node-loss' ? ['--node-loss', 'on'] : [],
    steps: [
      { op: 'apply', objects: loadManifests([join(DEPLOY, 'csidriver.yaml'), join(DEPLOY, 'storageclasses.yaml')], u), label: 'deploy/base' },
      { op: 'apply', objects: checkInlineObjects(benchNodes(count), 'nodes', u), label: 'nodes' },
      // Start-up: the drivers' first lists and watches, elections, first capacity objects.
      { op: 'wait', condition: { for: 'settled', quietMs: 30_000 }, timeoutMs: 120_000, label: 'started', paced: true },
      { op: 'mark', text: IDLE_START },
      // Idle, paced: virtual time runs at wall speed, as the drivers' own timers do.
      { op: 'wait', condition: { for: 'podsRunning', names: ['never-made'] }, timeoutMs: IDLE_MS, label: 'idle', paced: true },
      { op: 'mark', text: IDLE_END },
    ],
  };
}

/** The component a request row stands for: "lode-driver" (every node's driver, from its User-Agent), "csi-provisioner", ... */
function family(client: string): string {
  const c = client.startsWith('external/') ? client.slice('external/'.length) : client;
  const at = c.indexOf('@');
  return (at < 0 ? c : c.slice(0, at)).split('/')[0] ?? c;
}

interface Window {
  /** list, get and writes in the window, all nodes together. */
  requests: number;
  byVerb: Record<string, number>;
  /** Watches opened (or re-opened) in the window. */
  watches: number;
}

function windowOf(start: readonly RequestCount[], end: readonly RequestCount[], fam: string): Window {
  const before = new Map(start.map((r) => [`${r.client}\0${r.verb}\0${r.resource}`, r.count]));
  const w: Window = { requests: 0, byVerb: {}, watches: 0 };
  for (const r of end) {
    if (family(r.client) !== fam) continue;
    const n = r.count - (before.get(`${r.client}\0${r.verb}\0${r.resource}`) ?? 0);
    if (n <= 0) continue;
    if (r.verb === 'watch') w.watches += n;
    else {
      w.requests += n;
      w.byVerb[r.verb] = (w.byVerb[r.verb] ?? 0) + n;
    }
  }
  return w;
}

async function main(): Promise<number> {
  if (typeof process.getuid === 'function' && process.getuid() !== 0) {
    process.stderr.write('api idle bench needs root: the simulated nodes run real lode drivers (loop devices, mounts)\n');
    return 1;
  }
  const sizes = (process.env.LODE_API_IDLE_NODES ?? '3,100').split(',').map(Number).filter((n) => n > 0);
  const workRoot = resolve(process.env.LODE_BENCH_WORK_DIR ?? '/var/lib/lode/bench');
  mkdirSync(workRoot, { recursive: true });
  const rows: string[] = [];
  // The base install at the smallest size only: with nothing leader-elected its figure does not
  // depend on the node count, and each run costs minutes.
  const runs: Array<[Config, number]> = [...(sizes.length > 0 ? [['base', Math.min(...sizes)] as [Config, number]] : []), ...sizes.map((n): [Config, number] => ['node-loss', n])];
  try {
    const ran = await interruptible('api idle bench', async (stop) => {
      for (const [config, count] of runs) rows.push(await idleRow(config, count, workRoot, stop));
    });
    if (ran === INTERRUPTED) return 130;
  } catch (err) {
    if (!(err instanceof RunUnusable)) throw err;
    process.stderr.write(`${err.message}\n`);
    return 1;
  }
  process.stdout.write(`API requests per node per idle minute (${os.cpus().length} cores; drivers with API access as deploy/base runs them, and with node-loss on; list, get and writes; watches opened counted apart)\n`);
  process.stdout.write(`${'drivers'.padEnd(11)}${'nodes'.padEnd(7)}${'minutes'.padEnd(9)}${'lode-driver'.padEnd(13)}${'csi-provisioner'.padEnd(17)}${'lode watches'.padEnd(13)}${'prov. watches'.padEnd(17)}wall, requests in the window by verb\n`);
  for (const row of rows) process.stdout.write(`${row}\n`);
  return 0;
}

/** A run that did not reach its marks or tore down unclean: the bench fails with its message. */
class RunUnusable extends Error {}

/** One configuration's run at one size: its table row. */
async function idleRow(config: Config, count: number, workRoot: string, stop: Interrupts): Promise<string> {
  process.stderr.write(`api idle bench: ${config}, ${count} nodes, ${IDLE_MS / 1000} s idle ...\n`);
  const started = Date.now();
  const r = await runScenario(scenario(count, config), { workDir: join(workRoot, `api-idle-${process.pid}-${config}-${count}`), signal: stop.signal, onCluster: stop.onCluster });
  const wallS = (Date.now() - started) / 1000;
  const a = r.marks.find((m) => m.text === IDLE_START);
  const b = r.marks.find((m) => m.text === IDLE_END);
  if (a === undefined || b === undefined || r.teardownProblems.length > 0) {
    throw new RunUnusable(`api idle bench: ${config}, ${count} nodes: the run did not reach its marks, or tore down unclean: ${r.teardownProblems.join('; ')}`);
  }
  const minutes = (b.virtualMs - a.virtualMs) / 60_000;
  if (process.env.LODE_API_IDLE_DEBUG) for (const x of b.requests) process.stderr.write(`${x.client} ${x.verb} ${x.resource} ${x.count}\n`);
  const per = (w: Window): string => (w.requests / count / minutes).toFixed(2);
  const lode = windowOf(a.requests, b.requests, 'lode-driver');
  const prov = windowOf(a.requests, b.requests, 'csi-provisioner');
  const verbs = (w: Window): string => Object.entries(w.byVerb).sort().map(([v, n]) => `${v} ${n}`).join(', ') || 'none';
  return `${config.padEnd(11)}${String(count).padEnd(7)}${minutes.toFixed(2).padEnd(9)}${per(lode).padEnd(13)}${per(prov).padEnd(17)}${String(lode.watches).padEnd(13)}${String(prov.watches).padEnd(17)}${wallS.toFixed(0)} s   lode: ${verbs(lode)}; csi-provisioner: ${verbs(prov)}`;
}

main().then((code) => { process.exitCode = code; }, (err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
});
