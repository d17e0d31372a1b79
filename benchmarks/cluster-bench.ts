// `npm run bench` part: the cluster bench at 10, 25, 50 and 100 nodes with 10 volume-backed pods per node, distributed (and central at the ends); prints wall time, its growth exponent, events/s, peak memory and API requests per pod.
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkInlineObjects, loadManifests, UnmodelledFields } from '../src/bench/manifests/load-manifests.js';
import { runScenario } from '../src/bench/scenario/scenario-runner.js';
import type { Scenario } from '../src/bench/scenario/scenario-file.js';
import type { ProvisioningMode } from '../src/bench/cluster/cluster.js';
import type { RunCpu, RunResult } from '../src/bench/scenario/run-result.js';
import { humanBytes } from '../src/util/quantity.js';
import { benchNodes } from './bench-nodes.js';
import { INTERRUPTED, interruptible } from './interrupts.js';
import { CAPACITY_POLL_MS } from '../src/bench/controllers/capacity-publisher.js';
import { formatDuration } from '../src/bench/clock/virtual-clock.js';

const DEPLOY = fileURLToPath(new URL('../../deploy/base/', import.meta.url));
const PODS_PER_NODE = 10;

/**
 * Pods with one 16Mi volume each: odd pods a generic ephemeral volume (the ephemeral-volume
 * controller makes the claim), even pods a claim applied beside them; the two kinds the seed
 * names as API-server load, the same workload in both provisioning modes.
 */
function podObjects(count: number): unknown[] {
  const objs: unknown[] = [];
  const claimSpec = { accessModes: ['ReadWriteOnce'], storageClassName: 'lode-local', resources: { requests: { storage: '16Mi' } } };
  for (let i = 1; i <= count; i++) {
    const name = `app-${String(i).padStart(4, '0')}`;
    const ephemeral = i % 2 === 1;
    if (!ephemeral) objs.push({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: `${name}-data` }, spec: claimSpec });
    objs.push({
      apiVersion: 'v1', kind: 'Pod', metadata: { name },
      spec: {
        containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.9', resources: { requests: { cpu: '250m', memory: '512Mi' } } }],
        volumes: [ephemeral
          ? { name: 'data', ephemeral: { volumeClaimTemplate: { spec: claimSpec } } }
          : { name: 'data', persistentVolumeClaim: { claimName: `${name}-data` } }],
      },
    });
  }
  return objs;
}

function scenario(nodes: number, provisioning: ProvisioningMode): Scenario {
  const u = new UnmodelledFields();
  return {
    name: `cluster-bench-${nodes}x${nodes * PODS_PER_NODE}-${provisioning}`,
    provisioning,
    description: '',
    file: 'bench/cluster-bench.ts',
    seed: 1,
    capacityPollMs: CAPACITY_POLL_MS,
    // The control plane's scaling, as docs/benchmarks.md has measured it: the drivers without
    // API access, so their own requests and timers are not part of these figures.
    driverApi: false,
    steps: [
      { op: 'apply', objects: loadManifests([join(DEPLOY, 'csidriver.yaml'), join(DEPLOY, 'storageclasses.yaml')], u), label: 'deploy/base' },
      { op: 'apply', objects: checkInlineObjects(benchNodes(nodes), 'nodes', u), label: 'nodes' },
      { op: 'apply', objects: checkInlineObjects(podObjects(nodes * PODS_PER_NODE), 'pods', u), label: 'pods' },
      { op: 'wait', condition: { for: 'allPodsRunning' }, timeoutMs: 30 * 60_000, label: 'allPodsRunning' },
    ],
  };
}

async function main(): Promise<number> {
  if (typeof process.getuid === 'function' && process.getuid() !== 0) {
    process.stderr.write('cluster bench needs root: the simulated nodes run real lode drivers (loop devices, mounts)\n');
    return 1;
  }
  const args = process.argv.slice(2);
  // `--distributed-only`: the sizes without the central comparison runs.
  const distributedOnly = args.includes('--distributed-only');
  // `--overlap N`: reconciles waiting on driver calls at most at once (1: one call at a time across the cluster).
  const o = args.indexOf('--overlap');
  const overlap = o >= 0 ? Number(args.splice(o, 2)[1]) : undefined;
  if (overlap !== undefined && !(Number.isInteger(overlap) && overlap >= 1)) {
    process.stderr.write('cluster bench: --overlap takes a whole number of at least 1\n');
    return 2;
  }
  const sizes = args.map(Number).filter((n) => n > 0);
  const workRoot = resolve(process.env.LODE_BENCH_WORK_DIR ?? '/var/lib/lode/bench');
  mkdirSync(workRoot, { recursive: true });
  const rows: { nodes: number; r: RunResult }[] = [];
  // Each size with a provisioner per node; the smallest and the largest also with one central
  // provisioner, the same workload, to compare. Four sizes give the growth exponent.
  const chosen = sizes.length > 0 ? sizes : [10, 25, 50, 100];
  const compared = distributedOnly ? [] : [Math.min(...chosen), Math.max(...chosen)];
  const plan: [number, ProvisioningMode][] = chosen.flatMap((n) => [[n, 'distributed'], ...(compared.includes(n) ? [[n, 'central']] : [])] as [number, ProvisioningMode][]);
  const ran = await interruptible('cluster bench', async (stop) => {
    for (const [nodes, mode] of plan) {
      process.stderr.write(`cluster bench: ${nodes} nodes x ${nodes * PODS_PER_NODE} pods, ${mode} provisioning ...\n`);
      const r = await runScenario(scenario(nodes, mode), { workDir: join(workRoot, `cluster-bench-${process.pid}-${nodes}-${mode}`), signal: stop.signal, onCluster: stop.onCluster, ...(overlap !== undefined ? { overlap } : {}) });
      rows.push({ nodes, r });
      const running = r.pods.filter((p) => p.phase === 'Running').length;
      if (running !== r.pods.length || r.teardownProblems.length > 0) {
        process.stderr.write(`cluster bench: ${running}/${r.pods.length} pods running; teardown: ${r.teardownProblems.join('; ') || 'clean'}\n`);
        return false;
      }
    }
    return true;
  });
  if (ran === INTERRUPTED) return 130;
  if (!ran) return 1;
  process.stdout.write('\ncluster bench (real lode drivers, 16Mi ext4 volume per pod, half generic ephemeral, half claims; capacity tracking on)\n');
  process.stdout.write(`${'mode'.padEnd(12)}${'nodes'.padEnd(6)}${'pods'.padEnd(6)}${'wall'.padEnd(9)}${'wall/pod'.padEnd(10)}${'virtual'.padEnd(9)}${'events'.padEnd(8)}${'events/s'.padEnd(10)}${'attempts'.padEnd(10)}${'bench RSS'.padEnd(11)}CPU until settled: bench process, drivers, whole machine (cores busy)\n`);
  for (const { nodes, r } of rows) {
    const m = r.metrics;
    process.stdout.write(`${r.provisioning.padEnd(12)}${String(nodes).padEnd(6)}${String(r.pods.length).padEnd(6)}${`${(m.wallMs / 1000).toFixed(1)}s`.padEnd(9)}${`${(m.wallMs / r.pods.length).toFixed(0)}ms`.padEnd(10)}${formatDuration(m.settledVirtualMs).padEnd(9)}${String(m.events).padEnd(8)}${m.eventsPerWallSecond.toFixed(1).padEnd(10)}${String(m.totalSchedulingAttempts).padEnd(10)}${humanBytes(m.peakRssBytes).padEnd(11)}${cpuCell(m.cpu, m.wallMs)}\n`);
  }
  const distributed = rows.filter((x) => x.r.provisioning === 'distributed');
  const first = distributed[0]!;
  const last = distributed[distributed.length - 1]!;
  if (distributed.length > 1) {
    const ratio = (last.r.metrics.wallMs / last.nodes) / (first.r.metrics.wallMs / first.nodes);
    process.stdout.write(`scaling: wall time per node at ${last.nodes} nodes is ${ratio.toFixed(2)}x that at ${first.nodes} nodes (1.00 = linear)\n`);
    process.stdout.write(`growth: wall time grows as pods^${growthExponent(distributed.map((x) => [x.r.pods.length, x.r.metrics.wallMs])).toFixed(2)} over ${distributed.map((x) => x.nodes).join(', ')} nodes (least squares on logarithms; 1.00 = linear)\n`);
  }
  const at100 = distributed.find((x) => x.nodes === 100);
  process.stdout.write(`goal (100 nodes x 1,000 pods settle in under 60 s wall): ${at100 === undefined ? 'not measured' : at100.r.metrics.wallMs < 60_000 ? 'met' : `NOT met (${(at100.r.metrics.wallMs / 1000).toFixed(1)} s)`}\n`);
  process.stdout.write(`\n${renderRequestTable(rows)}`);
  return 0;
}

/** The run's CPU split (RunCpu) in seconds, with the machine's average busy cores over the wall time. */
function cpuCell(cpu: RunCpu, wallMs: number): string {
  const s = (ms: number) => `${(ms / 1000).toFixed(1)}s`;
  return `${s(cpu.benchMs)}, ${s(cpu.driversMs)}, ${s(cpu.machineMs)} (${(cpu.machineMs / Math.max(1, wallMs)).toFixed(2)})`;
}

/** The slope of log(wall) against log(pods): wall time ~ pods^k. */
function growthExponent(points: [number, number][]): number {
  const xs = points.map(([n]) => Math.log(n));
  const ys = points.map(([, ms]) => Math.log(ms));
  const mx = xs.reduce((a, b) => a + b, 0) / xs.length;
  const my = ys.reduce((a, b) => a + b, 0) / ys.length;
  let num = 0;
  let den = 0;
  for (let i = 0; i < xs.length; i++) {
    num += (xs[i]! - mx) * (ys[i]! - my);
    den += (xs[i]! - mx) ** 2;
  }
  return num / den;
}

/** API requests per pod in each run, and where they come from (docs/bench.md, "API requests", for the model). */
function renderRequestTable(rows: { nodes: number; r: RunResult }[]): string {
  const families = (r: RunResult): Map<string, number> => {
    const m = new Map<string, number>();
    for (const [client, n] of Object.entries(r.apiRequestTotals.byClient)) {
      const at = client.indexOf('@');
      const f = at < 0 ? (client.startsWith('kube-controller-manager/') ? 'kube-controller-manager' : client) : client.slice(0, at);
      m.set(f, (m.get(f) ?? 0) + n);
    }
    return m;
  };
  const cols = ['kubelet', 'csi-provisioner', 'kube-scheduler', 'kube-controller-manager', 'csi-snapshotter', 'snapshot-controller', 'kubectl'];
  let out = 'API requests per pod (as the upstream components would send them; list+watch = informers, get = direct reads, writes incl. events)\n';
  out += `${'mode'.padEnd(12)}${'nodes'.padEnd(6)}${'pods'.padEnd(6)}${'total'.padEnd(8)}${'per pod'.padEnd(9)}${'list+watch'.padEnd(11)}${'get'.padEnd(7)}${'writes'.padEnd(8)}${cols.map((c) => c.padEnd(c.length + 2)).join('')}\n`;
  for (const { nodes, r } of rows) {
    const t = r.apiRequestTotals;
    const f = families(r);
    out += `${r.provisioning.padEnd(12)}${String(nodes).padEnd(6)}${String(t.pods).padEnd(6)}${String(t.total).padEnd(8)}${t.perPod.toFixed(1).padEnd(9)}${String(t.listWatch).padEnd(11)}${String(t.reads).padEnd(7)}${String(t.writes).padEnd(8)}${cols.map((c) => ((f.get(c) ?? 0) / Math.max(1, t.pods)).toFixed(1).padEnd(c.length + 2)).join('')}\n`;
  }
  out += '(per-component columns: requests per pod; kube-controller-manager sums its controllers and its shared informers)\n';
  return out;
}

main().then((code) => { process.exitCode = code; }, (err: unknown) => {
  process.stderr.write(`cluster bench: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  process.exitCode = 1;
});
