// Driver benchmarks: lifecycle vs the raw tools, call latency with 1000 volumes, create throughput, memory, Lode against the reference Go driver, driver starts and tool starts.
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { CsiClient } from '../src/csi/client.js';
import { ApiCluster } from '../test/helpers/api-cluster.js';
import { csiTool } from '../test/helpers/csi-tools.js';
import { DriverHarness, MiB, mountCap } from '../test/helpers/driver-harness.js';
import { copyDriverBuild } from '../test/helpers/driver-build-copy.js';
import { DRIVER_NODE_FLAGS } from '../src/util/driver-node-flags.js';
import { lodeLifecycle, median, percentile, timeMs, toolsLifecycle } from './lifecycle.js';
import { residentMiBOf, wakeupsOf } from './proc-usage.js';
import { processCpuMs } from '../src/sys/cpu-time.js';

async function rssMiB(proc: ChildProcess | undefined): Promise<number> {
  return proc?.pid ? residentMiBOf(proc.pid).rss : NaN;
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

/** Starts the reference Go driver (hostpathplugin v1.16.1 from the upstream tools) on a fresh state directory. */
async function startHostpath(bin: string): Promise<{ client: CsiClient; pid: number; stop: () => Promise<void> }> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lode-bench-hp-'));
  const sock = path.join(dir, 'hp.sock');
  const proc = spawn(bin, ['--endpoint', `unix://${sock}`, '--nodeid', 'bench', '--drivername', 'hostpath.csi.k8s.io', '--statedir', path.join(dir, 'state')], { stdio: 'ignore' });
  const client = new CsiClient(`unix://${sock}`, 30_000);
  const stop = async () => {
    client.close();
    proc.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    await fs.rm(dir, { recursive: true, force: true });
  };
  for (let i = 0; ; i++) {
    try { await client.probe({}, { timeoutMs: 500 }); break; } catch (err) {
      if (i >= 100) { await stop(); throw err; }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return { client, pid: proc.pid ?? 0, stop };
}

/** p50 of `n` calls, one after the other, in ms. */
async function p50(n: number, fn: () => Promise<unknown>): Promise<number> {
  const xs: number[] = [];
  for (let i = 0; i < n; i++) xs.push(await timeMs(fn));
  return median(xs);
}

interface DriverFigures { one: number; sixteen: number; cpuPerCreate: number; probe: number; capacity: number; probeCold: number; capacityCold: number }

/** The call latencies, the figures the bare grpc-js server has too. */
type CallFigures = Pick<DriverFigures, 'probe' | 'capacity' | 'probeCold' | 'capacityCold'>;

/**
 * Untimed calls of one method between its first 1000 and its timed ones. A Node.js server and this
 * client both run their gRPC code unoptimised at first, so the first calls are slower (the
 * `first 1000` rows show by how much); the main figures are of the steady state, which liveness
 * probes and capacity polls meet.
 */
const WARM_UP_CALLS = 2000;

/** Probe and GetCapacity p50 of one server: the first 1000 calls, then 1000 after the warm-up, one after the other. */
async function callFigures(client: CsiClient): Promise<CallFigures> {
  const probeCold = await p50(1000, () => client.probe({}));
  await p50(WARM_UP_CALLS, () => client.probe({}));
  const probe = await p50(1000, () => client.probe({}));
  const capacityCold = await p50(1000, () => client.getCapacity({}));
  await p50(WARM_UP_CALLS, () => client.getCapacity({}));
  const capacity = await p50(1000, () => client.getCapacity({}));
  return { probe, capacity, probeCold, capacityCold };
}

/**
 * The same measurements of one driver (its server process is `pid`) through the same client
 * code: creates/s at 1 and 16 concurrent, the server's own CPU per create at 16 concurrent (from
 * /proc: Lode's tool helper not counted), Probe and GetCapacity p50.
 */
async function figuresOf(client: CsiClient, prefix: string, pid: number): Promise<DriverFigures> {
  await createThroughput(client, `${prefix}-warm`, 20, 4); // first connection, JIT
  const one = await createThroughput(client, `${prefix}-one`, 100, 1);
  const cpuBefore = processCpuMs(pid);
  const sixteen = await createThroughput(client, `${prefix}-par`, 200, 16);
  const cpuPerCreate = (processCpuMs(pid) - cpuBefore) / 200;
  return { one, sixteen, cpuPerCreate, ...(await callFigures(client)) };
}

/** A bare grpc-js server (grpc-floor-server.ts) in a process of its own, with the driver's Node.js flags: the floor under Lode's call latency. */
async function floorFigures(): Promise<CallFigures> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lode-bench-floor-'));
  const sock = path.join(dir, 'floor.sock');
  const server = fileURLToPath(new URL('./grpc-floor-server.js', import.meta.url));
  const proc = spawn(process.execPath, [...DRIVER_NODE_FLAGS, server, sock], { stdio: 'ignore' });
  const client = new CsiClient(`unix://${sock}`, 30_000);
  try {
    for (let i = 0; ; i++) {
      try { await client.probe({}, { timeoutMs: 500 }); break; } catch (err) {
        if (i >= 100) throw err;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    // Measured as the drivers are, its first 1000 calls included.
    return await callFigures(client);
  } finally {
    client.close();
    proc.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    await fs.rm(dir, { recursive: true, force: true });
  }
}

/**
 * Lode against the reference Go driver (hostpathplugin v1.16.1, from the upstream tools; it is
 * not part of Lode), side by side in one run: each on a fresh pool, measured in alternating
 * rounds, medians of the rounds. Lode's volumes are preallocated loop images with durable
 * records; hostpath's are plain directories with no fsync. A third column: a bare grpc-js
 * server answering constants, the floor of a Node.js server's call latency.
 */
async function compareWithHostpath(rounds: number): Promise<void> {
  const bin = await csiTool('hostpathplugin');
  if (typeof bin !== 'string') {
    console.log(`  (skipped: ${bin.missing})`);
    return;
  }
  const lode: DriverFigures[] = [];
  const hostpath: DriverFigures[] = [];
  const floor: CallFigures[] = [];
  for (let r = 0; r < rounds; r++) {
    const h = await DriverHarness.start({ pools: [{ name: 'fast', size: '8Gi' }] });
    try {
      lode.push(await figuresOf(h.client, `cmp${r}`, h.proc?.pid ?? 0));
    } finally {
      await h.cleanup();
    }
    const hp = await startHostpath(bin);
    try {
      hostpath.push(await figuresOf(hp.client, `cmp${r}`, hp.pid));
    } finally {
      await hp.stop();
    }
    floor.push(await floorFigures());
  }
  const m = (xs: Array<Partial<DriverFigures>>, k: keyof DriverFigures) => median(xs.map((x) => x[k] ?? NaN));
  const cell = (v: number, unit: string, digits: number) => (Number.isNaN(v) ? '-' : `${v.toFixed(digits)} ${unit}`).padStart(12);
  const row = (label: string, k: keyof DriverFigures, unit: string, digits: number, goal: string) => {
    const a = m(lode, k);
    const b = m(hostpath, k);
    const f = k === 'probe' || k === 'capacity' || k === 'probeCold' || k === 'capacityCold' ? m(floor, k) : NaN;
    console.log(`  ${label.padEnd(24)}${cell(a, unit, digits)}${cell(b, unit, digits)}${cell(f, unit, digits)}   ${(a / b).toFixed(2)}x${Number.isNaN(f) ? '' : ` (floor ${(f / b).toFixed(2)}x)`}  ${goal}`);
  };
  console.log(`  ${''.padEnd(24)}${'Lode'.padStart(12)}${'hostpath'.padStart(12)}${'grpc-js'.padStart(12)}   Lode/hostpath  (median of ${rounds} alternating rounds)`);
  row('creates, 1 at a time', 'one', '/s', 1, '');
  row('creates, 16 concurrent', 'sixteen', '/s', 1, '(goal >= 0.50x)');
  row('CPU a create, 16 conc.', 'cpuPerCreate', 'ms', 2, '(the server process\'s own)');
  row('Probe p50', 'probe', 'ms', 3, '(goal <= 1.00x)');
  row('GetCapacity p50', 'capacity', 'ms', 3, '(goal <= 1.00x)');
  row('Probe p50, first 1000', 'probeCold', 'ms', 3, '(before the warm-up)');
  row('GetCapacity p50, 1st 1000', 'capacityCold', 'ms', 3, '(before the warm-up)');
}

/**
 * (f) Driver starts until the first ready Probe: the build's bundle with its code cache, the same
 * bundle without the cache, and the same command loaded module by module
 * (benchmarks/unbundled-lode.ts), alternating, each on a fresh work dir.
 */
async function driverStarts(rounds: number): Promise<void> {
  const unbundled = fileURLToPath(new URL('./unbundled-lode.js', import.meta.url));
  // The same build copied without its code cache.
  const uncached = copyDriverBuild(false);
  const kinds = ['bundle', 'uncached', 'modules'] as const;
  const cli: Record<(typeof kinds)[number], string | undefined> = { bundle: undefined, uncached: uncached.cli, modules: unbundled };
  const label: Record<(typeof kinds)[number], string> = { bundle: 'bundle with its code cache (built)', uncached: 'bundle without its code cache', modules: 'its modules one by one' };
  const wall: Record<(typeof kinds)[number], number[]> = { bundle: [], uncached: [], modules: [] };
  const cpu: Record<(typeof kinds)[number], number[]> = { bundle: [], uncached: [], modules: [] };
  try {
    for (let i = 0; i < rounds; i++) {
      for (const kind of kinds) {
        const t0 = performance.now();
        const c = cli[kind];
        const h = await DriverHarness.start({ pools: [{ name: 'fast', size: '64Mi' }], ...(c !== undefined ? { cli: c } : {}) });
        wall[kind].push(performance.now() - t0);
        // What the start cost beyond waiting.
        cpu[kind].push(h.proc?.pid === undefined ? NaN : processCpuMs(h.proc.pid));
        await h.cleanup();
      }
    }
  } finally {
    uncached.remove();
  }
  for (const kind of kinds) {
    console.log(`  ${label[kind].padEnd(36)} ${median(wall[kind]).toFixed(0)} ms to ready, ${median(cpu[kind]).toFixed(0)} ms of CPU   (median of ${rounds})`);
  }
}

/**
 * (f) A started driver left alone (no calls, no API access), after `settleMs`: its CPU and its
 * main thread's wake-ups a second over `windowMs`, without and with the metrics endpoint (whose
 * figures include the event-loop lag, sampled on a timer). A machine of a bench run holds one driver per
 * simulated node, so this is paid once per node for the whole run.
 */
async function idleDriver(label: string, extraArgs: string[], settleMs: number, windowMs: number): Promise<void> {
  const h = await DriverHarness.start({ pools: [{ name: 'fast', size: '64Mi' }], extraArgs });
  try {
    const pid = h.proc?.pid;
    if (pid === undefined) throw new Error('the driver has no process id');
    await new Promise((r) => setTimeout(r, settleMs));
    const cpu0 = processCpuMs(pid);
    const wakeups0 = wakeupsOf(pid);
    await new Promise((r) => setTimeout(r, windowMs));
    const seconds = windowMs / 1000;
    console.log(`  ${label.padEnd(36)} ${((processCpuMs(pid) - cpu0) / seconds).toFixed(1)} ms of CPU a second, ${((wakeupsOf(pid) - wakeups0) / seconds).toFixed(1)} wake-ups of its main thread a second   (${settleMs / 1000} s after the start, over ${seconds} s)`);
  } finally {
    await h.cleanup();
  }
}

/** (f) in full: driver starts, then an idle driver without and with the metrics endpoint. */
async function partF(): Promise<void> {
  await driverStarts(Number(process.env.LODE_BENCH_START_ROUNDS ?? '10'));
  await idleDriver('idle', [], 10_000, 30_000);
  await idleDriver('idle, serving /metrics', ['--metrics-address', '127.0.0.1:0'], 10_000, 30_000);
}

/**
 * (g) Starting a tool through the tool seam (`true`, one after another), through the tool helper
 * and directly (LODE_TOOL_HELPER=off: a fork of the Node.js process, then setpriv), alternating,
 * each in a child process (benchmarks/tool-start-probe.ts). CPU counts every process: the caller,
 * the helper and the tools.
 */
async function toolStarts(rounds: number): Promise<void> {
  const probe = fileURLToPath(new URL('./tool-start-probe.js', import.meta.url));
  const modes = [['the tool helper', 'on'], ['directly (fork + setpriv)', 'off']] as const;
  const wall: Record<string, number[]> = { on: [], off: [] };
  const cpu: Record<string, number[]> = { on: [], off: [] };
  const own: Record<string, number[]> = { on: [], off: [] };
  let memory = 'not measured';
  for (let i = 0; i < rounds; i++) {
    for (const [, mode] of modes) {
      const child = spawn(process.execPath, [probe, '200'], { env: { ...process.env, LODE_TOOL_HELPER: mode }, stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      child.stdout?.setEncoding('utf8').on('data', (c: string) => { out += c; });
      const code = await new Promise<number | null>((r) => child.on('close', r));
      if (code !== 0) throw new Error(`tool-start probe (LODE_TOOL_HELPER=${mode}) exited with ${code}`);
      const got = JSON.parse(out) as { wallMs: number; cpuMs: number; ownCpuMs: number; helperRssMiB?: number; helperAnonMiB?: number };
      if (got.helperRssMiB !== undefined) memory = `${got.helperRssMiB.toFixed(1)} MiB resident, ${(got.helperAnonMiB ?? NaN).toFixed(1)} MiB of it its own`;
      wall[mode]!.push(got.wallMs);
      cpu[mode]!.push(got.cpuMs);
      own[mode]!.push(got.ownCpuMs);
    }
  }
  for (const [label, mode] of modes) {
    console.log(`  ${label.padEnd(36)} ${median(wall[mode]!).toFixed(2)} ms a tool, ${median(cpu[mode]!).toFixed(2)} ms of CPU in all, ${median(own[mode]!).toFixed(2)} ms the caller's own   (median of ${rounds} x 200)`);
  }
  console.log(`  the helper after the last round       ${memory}`);
}

async function main(): Promise<void> {
  const runs = Number(process.env.LODE_BENCH_RUNS ?? '5');
  console.log(`Lode driver benchmark (${os.cpus().length} cores, node ${process.version})`);
  const hostpathRounds = Number(process.env.LODE_BENCH_HOSTPATH_ROUNDS ?? '3');
  // `--starts-only`: the driver-start comparison alone, (f) below.
  if (process.argv.includes('--starts-only')) {
    console.log('\n(f) driver start, a loop pool, until Probe answers ready');
    await partF();
    return;
  }
  // `--tools-only`: the tool-start comparison alone, (g) below.
  if (process.argv.includes('--tools-only')) {
    console.log('\n(g) starting a system tool (`true`), through the tool helper and directly');
    await toolStarts(Number(process.env.LODE_BENCH_TOOL_ROUNDS ?? '5'));
    return;
  }
  // `--hostpath-only`: the comparison with the reference driver alone, (e) below.
  if (process.argv.includes('--hostpath-only')) {
    console.log('\n(e) against the reference Go driver (hostpathplugin v1.16.1), 16 MiB volumes, same client');
    await compareWithHostpath(hostpathRounds);
    return;
  }

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
    // `--lifecycle-only`: the lifecycle comparison alone, (a) above.
    if (process.argv.includes('--lifecycle-only')) return;

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

    console.log('\n(e) against the reference Go driver (hostpathplugin v1.16.1), 16 MiB volumes, same client');
    await compareWithHostpath(hostpathRounds);

    console.log('\n(f) driver start, a loop pool, until Probe answers ready');
    await partF();

    console.log('\n(g) starting a system tool (`true`), through the tool helper and directly');
    await toolStarts(Number(process.env.LODE_BENCH_TOOL_ROUNDS ?? '5'));
  } finally {
    await h.cleanup();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
