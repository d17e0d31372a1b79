// `npm run bench` part: the cluster bench at 2, 5 and 10 nodes with 10 volume-backed pods per node; prints wall time, events/s and peak memory.
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkInlineObjects, loadManifests, UnmodelledFields } from '../src/bench/manifests/load-manifests.js';
import { runScenario } from '../src/bench/scenario/scenario-runner.js';
import type { Scenario } from '../src/bench/scenario/scenario-file.js';
import type { ProvisioningMode } from '../src/bench/cluster/cluster.js';
import type { RunResult } from '../src/bench/scenario/run-result.js';
import { humanBytes } from '../src/bench/api/quantity.js';
import { ANN_LODE_POOLS } from '../src/bench/api/annotations.js';
import { CAPACITY_POLL_MS } from '../src/bench/controllers/capacity-publisher.js';
import { formatDuration } from '../src/bench/clock/virtual-clock.js';

const DEPLOY = fileURLToPath(new URL('../../deploy/base/', import.meta.url));
const PODS_PER_NODE = 10;

/** Nodes with a 256Mi pool each, pods with a 16Mi claim each (ext4's smallest Lode volume). */
function clusterObjects(nodes: number): unknown[] {
  const objs: unknown[] = [];
  for (let n = 1; n <= nodes; n++) {
    objs.push({
      apiVersion: 'v1', kind: 'Node',
      metadata: { name: `node-${String(n).padStart(2, '0')}`, annotations: { [ANN_LODE_POOLS]: 'local=256Mi' } },
      status: { allocatable: { cpu: '16', memory: '64Gi', pods: '110' } },
    });
  }
  return objs;
}

function podObjects(count: number): unknown[] {
  const objs: unknown[] = [];
  for (let i = 1; i <= count; i++) {
    const name = `app-${String(i).padStart(3, '0')}`;
    objs.push({
      apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: `${name}-data` },
      spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'lode-local', resources: { requests: { storage: '16Mi' } } },
    });
    objs.push({
      apiVersion: 'v1', kind: 'Pod', metadata: { name },
      spec: {
        containers: [{ name: 'app', resources: { requests: { cpu: '250m', memory: '512Mi' } } }],
        volumes: [{ name: 'data', persistentVolumeClaim: { claimName: `${name}-data` } }],
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
    steps: [
      { op: 'apply', objects: loadManifests([join(DEPLOY, 'csidriver.yaml'), join(DEPLOY, 'storageclasses.yaml')], u), label: 'deploy/base' },
      { op: 'apply', objects: checkInlineObjects(clusterObjects(nodes), 'nodes', u), label: 'nodes' },
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
  const sizes = process.argv.slice(2).map(Number).filter((n) => n > 0);
  const workRoot = resolve(process.env.LODE_BENCH_WORK_DIR ?? '/var/lib/lode/bench');
  mkdirSync(workRoot, { recursive: true });
  const rows: { nodes: number; r: RunResult }[] = [];
  const plan: [number, ProvisioningMode][] = (sizes.length > 0 ? sizes : [2, 5, 10]).map((n) => [n, 'distributed']);
  // The largest size once more with one central provisioner, to compare.
  plan.push([plan[plan.length - 1]![0], 'central']);
  for (const [nodes, mode] of plan) {
    process.stderr.write(`cluster bench: ${nodes} nodes x ${nodes * PODS_PER_NODE} pods, ${mode} provisioning ...\n`);
    const r = await runScenario(scenario(nodes, mode), { workDir: join(workRoot, `cluster-bench-${process.pid}-${nodes}-${mode}`) });
    rows.push({ nodes, r });
    const running = r.pods.filter((p) => p.phase === 'Running').length;
    if (running !== r.pods.length || r.teardownProblems.length > 0) {
      process.stderr.write(`cluster bench: ${running}/${r.pods.length} pods running; teardown: ${r.teardownProblems.join('; ') || 'clean'}\n`);
      return 1;
    }
  }
  process.stdout.write('\ncluster bench (real lode drivers, 16Mi ext4 volume per pod, capacity tracking on)\n');
  process.stdout.write(`${'mode'.padEnd(12)}${'nodes'.padEnd(6)}${'pods'.padEnd(6)}${'wall'.padEnd(9)}${'wall/pod'.padEnd(10)}${'virtual'.padEnd(9)}${'events'.padEnd(8)}${'events/s'.padEnd(10)}${'attempts'.padEnd(10)}peak RSS (bench process)\n`);
  for (const { nodes, r } of rows) {
    const m = r.metrics;
    process.stdout.write(`${r.provisioning.padEnd(12)}${String(nodes).padEnd(6)}${String(r.pods.length).padEnd(6)}${`${(m.wallMs / 1000).toFixed(1)}s`.padEnd(9)}${`${(m.wallMs / r.pods.length).toFixed(0)}ms`.padEnd(10)}${formatDuration(m.settledVirtualMs).padEnd(9)}${String(m.events).padEnd(8)}${m.eventsPerWallSecond.toFixed(1).padEnd(10)}${String(m.totalSchedulingAttempts).padEnd(10)}${humanBytes(m.peakRssBytes)}\n`);
  }
  const distributed = rows.filter((x) => x.r.provisioning === 'distributed');
  const first = distributed[0]!;
  const last = distributed[distributed.length - 1]!;
  if (distributed.length > 1) {
    const ratio = (last.r.metrics.wallMs / last.nodes) / (first.r.metrics.wallMs / first.nodes);
    process.stdout.write(`scaling: wall time per node at ${last.nodes} nodes is ${ratio.toFixed(2)}x that at ${first.nodes} nodes (1.00 = linear)\n`);
  }
  const goal = last.r.metrics.wallMs < 120_000;
  process.stdout.write(`goal (10 nodes x 100 pods settle in under 2 minutes wall): ${last.nodes === 10 ? (goal ? 'met' : 'NOT met') : 'not measured'}\n`);
  return 0;
}

main().then((code) => { process.exitCode = code; }, (err: unknown) => {
  process.stderr.write(`cluster bench: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  process.exitCode = 1;
});
