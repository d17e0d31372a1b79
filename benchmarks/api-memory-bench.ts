// Resident memory of an idle driver with API access, with a few hundred volumes, next to one without: the figure behind the 100 MiB goal.
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import type { ChildProcess } from 'node:child_process';
import { ApiCluster } from '../test/helpers/api-cluster.js';
import { DriverHarness, MiB, mountCap } from '../test/helpers/driver-harness.js';

const VOLUMES = Number(process.env.LODE_BENCH_VOLUMES ?? '300');
/** How long the driver idles before it is read: its start-up requests and first periodic looks are done. */
const SETTLE_MS = 10_000;

async function rssMiB(proc: ChildProcess | undefined): Promise<number> {
  if (!proc?.pid) return NaN;
  const status = await fs.readFile(`/proc/${proc.pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 'NaN') / 1024;
}

/** Starts a driver (with API access when `api` is given), fills its pool, lets it idle, and reads its RSS. */
async function measure(api: ApiCluster | undefined): Promise<{ started: number; full: number }> {
  const h = await DriverHarness.start({ nodeId: 'node-api', pools: [{ name: 'fast', size: `${VOLUMES * 16 + 256}Mi` }], ...(api ? { extraArgs: ['--kubeconfig', api.kubeconfig] } : {}) });
  try {
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const started = await rssMiB(h.proc);
    for (let i = 0; i < VOLUMES; i++) {
      await h.client.createVolume({ name: `mem-${i}`, capacity_range: { required_bytes: 16 * MiB }, volume_capabilities: [mountCap()] });
    }
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    return { started, full: await rssMiB(h.proc) };
  } finally {
    await h.cleanup();
  }
}

async function main(): Promise<void> {
  console.log(`Lode driver resident memory (${os.cpus().length} cores, node ${process.version}), VmRSS of the idle driver`);
  const off = await measure(undefined);
  const api = new ApiCluster({ dirPrefix: 'lode-bench-mem-' });
  api.store.create('Node', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-api' } });
  await api.start();
  let on: { started: number; full: number };
  try {
    on = await measure(api);
  } finally {
    await api.stop();
  }
  console.log(`  without API access   after start ${off.started.toFixed(1)} MiB   with ${VOLUMES} volumes ${off.full.toFixed(1)} MiB`);
  console.log(`  with API access      after start ${on.started.toFixed(1)} MiB   with ${VOLUMES} volumes ${on.full.toFixed(1)} MiB   (goal < 100 MiB)`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
