// Driver benchmarks: lifecycle vs the raw tools, call latency with 1000 volumes, create throughput, memory.
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { CsiClient } from '../src/csi/client.js';
import { ApiCluster } from '../test/helpers/api-cluster.js';
import { DriverHarness, MiB, mountCap } from '../test/helpers/driver-harness.js';
import { lodeLifecycle, median, percentile, timeMs, toolsLifecycle } from './lifecycle.js';

async function rssMiB(proc: ChildProcess | undefined): Promise<number> {
  if (!proc?.pid) return NaN;
  const status = await fs.readFile(`/proc/${proc.pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 'NaN');
  return kb / 1024;
}

async function latency(label: string, n: number, fn: () => Promise<unknown>): Promise<Record<string, number>> {
  const xs: number[] = [];
  for (let i = 0; i < n; i++) xs.push(await timeMs(fn));
  xs.sort((a, b) => a - b);
  const out = { p50: percentile(xs, 50), p99: percentile(xs, 99) };
  console.log(`  ${label.padEnd(36)} p50 ${out.p50.toFixed(2)} ms   p99 ${out.p99.toFixed(2)} ms   (${n} calls)`);
  return out;
}

async function createThroughput(client: CsiClient, prefix: string, count: number, concurrency: number): Promise<number> {
  let next = 0;
  const t = process.hrtime.bigint();
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < count) {
      const i = next++;
      await client.createVolume({ name: `${prefix}-${i}`, capacity_range: { required_bytes: 16 * MiB }, volume_capabilities: [mountCap()] });
    }
  }));
  const seconds = Number(process.hrtime.bigint() - t) / 1e9;
  return count / seconds;
}

/**
 * A second driver, given API access to a bench API server in this process (one Node, no other
 * objects), measured once its start-up requests are done.
 */
async function idleWithApiAccess(): Promise<number> {
  const api = new ApiCluster({ dirPrefix: 'lode-bench-api-' });
  api.store.create('Node', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-api' } });
  await api.start();
  const h = await DriverHarness.start({ nodeId: 'node-api', pools: [{ name: 'fast', size: '1Gi' }], extraArgs: ['--kubeconfig', api.kubeconfig] });
  try {
    await new Promise((r) => setTimeout(r, 5_000));
    return await rssMiB(h.proc);
  } finally {
    await h.cleanup();
    await api.stop();
  }
}

/** Optional yardstick: the reference Go driver, when HOSTPATH_PLUGIN names its binary (not part of Lode). */
async function hostpathYardstick(): Promise<void> {
  const bin = process.env.HOSTPATH_PLUGIN;
  if (!bin) {
    console.log('  (set HOSTPATH_PLUGIN=/path/to/hostpathplugin to add the reference Go driver as a gRPC-path yardstick)');
    return;
  }
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lode-bench-hp-'));
  const sock = path.join(dir, 'hp.sock');
  const proc = spawn(bin, ['--endpoint', `unix://${sock}`, '--nodeid', 'bench', '--drivername', 'hostpath.csi.k8s.io', '--statedir', path.join(dir, 'state')], { stdio: 'ignore' });
  const client = new CsiClient(`unix://${sock}`, 30_000);
  try {
    for (let i = 0; i < 100; i++) {
      try { await client.probe({}, { timeoutMs: 500 }); break; } catch { await new Promise((r) => setTimeout(r, 50)); }
    }
    await latency('hostpath GetCapacity', 1000, () => client.getCapacity({}));
    const rate = await createThroughput(client, 'hp', 200, 16);
    console.log(`  hostpath creates, 16 concurrent      ${rate.toFixed(1)} /s`);
  } finally {
    client.close();
    proc.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    await fs.rm(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const runs = Number(process.env.LODE_BENCH_RUNS ?? '5');
  console.log(`Lode driver benchmark (${os.cpus().length} cores, node ${process.version})`);

  // (a) lifecycle vs tools
  const h = await DriverHarness.start({ pools: [{ name: 'fast', size: '24Gi' }] });
  try {
    const rawDir = await fs.mkdtemp(path.join(h.root, 'raw-'));
    const lode: number[] = [];
    const tools: number[] = [];
    const toolsPrealloc: number[] = [];
    await lodeLifecycle(h, 999); // warm-up: first gRPC connection, JIT
    for (let i = 0; i < runs; i++) {
      tools.push(await toolsLifecycle(rawDir, i, false));
      toolsPrealloc.push(await toolsLifecycle(rawDir, i, true));
      lode.push(await lodeLifecycle(h, i));
    }
    const ratio = median(lode) / median(tools);
    console.log('\n(a) 1 GiB ext4 volume, create -> stage -> publish -> unpublish -> unstage -> delete (median of ' + runs + ')');
    console.log(`  tools by hand (truncate)             ${median(tools).toFixed(1)} ms`);
    console.log(`  tools by hand (fallocate, as Lode)   ${median(toolsPrealloc).toFixed(1)} ms`);
    console.log(`  Lode over CSI                        ${median(lode).toFixed(1)} ms`);
    console.log(`  ratio                                ${ratio.toFixed(2)}x against truncate, ${(median(lode) / median(toolsPrealloc)).toFixed(2)}x against fallocate  (goal <= 1.20x)`);

    // (d) idle memory, then (c) throughput while filling the pool to 1000 volumes
    const idle = await rssMiB(h.proc);
    const one = await createThroughput(h.client, 'seq', 100, 1);
    const sixteen = await createThroughput(h.client, 'par', 100, 16);
    console.log('\n(c) CreateVolume throughput (16 MiB volumes, preallocated)');
    console.log(`  1 at a time                          ${one.toFixed(1)} /s`);
    console.log(`  16 concurrent                        ${sixteen.toFixed(1)} /s   (${(sixteen / one).toFixed(2)}x)`);
    await createThroughput(h.client, 'fill', 800, 16);

    // (b) latency with 1000 volumes present
    const list = await h.client.listVolumes({});
    const staging = h.stagingPath('stats');
    const target = h.targetPath('stats');
    await fs.mkdir(path.dirname(target), { recursive: true });
    const id = list.entries[0]?.volume?.volume_id ?? '';
    await h.client.nodeStageVolume({ volume_id: id, staging_target_path: staging, volume_capability: mountCap() });
    await h.client.nodePublishVolume({ volume_id: id, staging_target_path: staging, target_path: target, volume_capability: mountCap() });
    console.log(`\n(b) call latency with ${list.entries.length} volumes in the pool`);
    await latency('GetCapacity', 2000, () => h.client.getCapacity({ parameters: { pool: 'fast' } }));
    await latency('NodeGetVolumeStats', 2000, () => h.client.nodeGetVolumeStats({ volume_id: id, volume_path: target }));
    await latency('ListVolumes (all)', 50, () => h.client.listVolumes({}));
    const full = await rssMiB(h.proc);
    console.log('\n(d) driver resident memory');
    console.log(`  idle (no volumes)                    ${idle.toFixed(1)} MiB`);
    console.log(`  with ${list.entries.length} volumes                    ${full.toFixed(1)} MiB   (goal < 100 MB)`);
    const withApi = await idleWithApiAccess();
    console.log(`  idle, with API access                ${withApi.toFixed(1)} MiB   (its own API client and the API features running)`);
    await h.client.nodeUnpublishVolume({ volume_id: id, target_path: target });
    await h.client.nodeUnstageVolume({ volume_id: id, staging_target_path: staging });

    console.log('\n(e) yardstick');
    await hostpathYardstick();
  } finally {
    await h.cleanup();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
