// The real `lode driver` with --metrics-address: run a volume lifecycle, scrape, and check the figures match the pool.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { status } from '@grpc/grpc-js';
import { grpcCode } from '../../src/csi/client.js';
import { DriverHarness, LODE_CLI, MiB } from '../helpers/driver-harness.js';
import { rootMissing, skipOrFail } from '../helpers/prerequisites.js';
import type { VolumeCapability } from '../../src/csi/types.js';
import { METRIC_NAMES } from '../../src/metrics/driver-metrics.js';
import { httpGet, metricsPort } from '../driver/support.js';
import { findSamples, parseExposition, sampleValue, type Sample } from './prom-text.js';

const POOL_BYTES = 256 * MiB;
const EXT4: VolumeCapability = { mount: { fs_type: 'ext4', mount_flags: [] }, access_mode: { mode: 'SINGLE_NODE_WRITER' } };

async function scrape(port: number): Promise<Sample[]> {
  const r = await httpGet(port, '/metrics');
  assert.equal(r.status, 200);
  return parseExposition(r.body);
}

function rpcCount(s: Sample[], method: string, code = 'OK'): number {
  const found = findSamples(s, METRIC_NAMES.rpcTotal, { method, code });
  return found.length === 0 ? 0 : found[0]!.value;
}

test('a volume lifecycle shows up in the scraped metrics, and pool figures match GetCapacity', async (t) => {
  if (skipOrFail(t, rootMissing())) return;
  const h = await DriverHarness.start({
    nodeId: 'node-metrics',
    pools: [{ name: 'fast', size: '256Mi' }],
    extraArgs: ['--metrics-address', '127.0.0.1:0'],
  });
  t.after(() => h.cleanup());
  const port = await metricsPort(h);

  const health = await httpGet(port, '/healthz');
  assert.equal(health.status, 200, health.body);
  assert.equal(health.body.trim(), 'ok');

  let s = await scrape(port);
  const fast = { pool: 'fast', backend: 'loop' };
  assert.equal(sampleValue(s, METRIC_NAMES.poolCapacity, fast), POOL_BYTES);
  assert.equal(sampleValue(s, METRIC_NAMES.poolAllocated, fast), 0);
  assert.equal(sampleValue(s, METRIC_NAMES.poolVolumes, fast), 0);
  // Every series names the node and the driver, so a fleet's scrapes can be told apart.
  assert.equal(findSamples(s, METRIC_NAMES.poolCapacity, { node_id: 'node-metrics', driver_name: 'lode.csi.dev' }).length, 1);

  const created = await h.client.createVolume({ name: 'pvc-metrics', capacity_range: { required_bytes: 64 * MiB }, volume_capabilities: [EXT4] });
  const id = created.volume?.volume_id ?? '';
  const size = Number(created.volume?.capacity_bytes);
  assert.ok(size >= 64 * MiB);
  // A request the pool cannot hold: counted under its status code, and no space is taken.
  await assert.rejects(
    h.client.createVolume({ name: 'pvc-too-big', capacity_range: { required_bytes: 1024 * MiB }, volume_capabilities: [EXT4] }),
    (err: unknown) => grpcCode(err) === status.RESOURCE_EXHAUSTED,
  );

  const staging = h.stagingPath('metrics');
  const target = h.targetPath('metrics');
  await fs.mkdir(path.dirname(target), { recursive: true });
  await h.client.nodeStageVolume({ volume_id: id, staging_target_path: staging, volume_capability: EXT4 });
  await h.client.nodePublishVolume({ volume_id: id, staging_target_path: staging, target_path: target, volume_capability: EXT4 });

  const cap = await h.client.getCapacity({ parameters: { pool: 'fast' } });
  s = await scrape(port);
  assert.equal(sampleValue(s, METRIC_NAMES.poolAllocated, fast), size);
  assert.equal(sampleValue(s, METRIC_NAMES.poolAvailable, fast), POOL_BYTES - size);
  assert.equal(sampleValue(s, METRIC_NAMES.poolAvailable, fast), Number(cap.available_capacity), 'gauge equals GetCapacity');
  assert.equal(sampleValue(s, METRIC_NAMES.poolVolumes, fast), 1);
  assert.equal(rpcCount(s, 'CreateVolume'), 1);
  assert.equal(rpcCount(s, 'CreateVolume', 'RESOURCE_EXHAUSTED') + rpcCount(s, 'CreateVolume', 'OUT_OF_RANGE'), 1,
    'the oversized create is counted with its error code');
  assert.equal(rpcCount(s, 'CreateVolume', 'RESOURCE_EXHAUSTED'), 1, 'a full pool is RESOURCE_EXHAUSTED');
  assert.equal(rpcCount(s, 'NodeStageVolume'), 1);
  assert.equal(rpcCount(s, 'NodePublishVolume'), 1);
  assert.ok(rpcCount(s, 'Probe') >= 1, 'the harness probes before the test starts');
  const stageTime = sampleValue(s, `${METRIC_NAMES.rpcDuration}_sum`, { method: 'NodeStageVolume', code: 'OK' });
  assert.ok(stageTime > 0 && stageTime < 60, `NodeStageVolume took ${stageTime}s`);

  // A snapshot: counted, and its charge is part of the allocated bytes.
  await fs.writeFile(path.join(target, 'data'), Buffer.alloc(4 * MiB, 7));
  const snap = await h.client.createSnapshot({ name: 'snap-metrics', source_volume_id: id, parameters: {} });
  s = await scrape(port);
  assert.equal(sampleValue(s, METRIC_NAMES.poolSnapshots, fast), 1);
  const charged = sampleValue(s, METRIC_NAMES.poolSnapshotBytes, fast);
  assert.ok(charged > 0 && charged <= size, `a snapshot of a ${size}-byte volume is charged ${charged}`);
  assert.equal(sampleValue(s, METRIC_NAMES.poolAllocated, fast), size + charged, 'allocated counts the snapshot\'s charge');
  await h.client.deleteSnapshot({ snapshot_id: snap.snapshot?.snapshot_id ?? '' });

  await h.client.nodeUnpublishVolume({ volume_id: id, target_path: target });
  await h.client.nodeUnstageVolume({ volume_id: id, staging_target_path: staging });
  await h.client.deleteVolume({ volume_id: id });

  s = await scrape(port);
  assert.equal(sampleValue(s, METRIC_NAMES.poolSnapshots, fast), 0);
  assert.equal(sampleValue(s, METRIC_NAMES.poolSnapshotBytes, fast), 0);
  assert.equal(sampleValue(s, METRIC_NAMES.poolAllocated, fast), 0);
  assert.equal(sampleValue(s, METRIC_NAMES.poolAvailable, fast), POOL_BYTES);
  assert.equal(sampleValue(s, METRIC_NAMES.poolVolumes, fast), 0);
  assert.equal(rpcCount(s, 'DeleteVolume'), 1);
  assert.equal(rpcCount(s, 'NodeUnstageVolume'), 1);
  assert.equal(sampleValue(s, `${METRIC_NAMES.rpcDuration}_count`, { method: 'DeleteVolume', code: 'OK' }), 1);
});

test('the driver refuses to start when the metrics port is taken, naming the address', async (t) => {
  if (skipOrFail(t, rootMissing())) return;
  const blocker = createServer();
  await new Promise<void>((resolve) => blocker.listen({ host: '127.0.0.1', port: 0 }, resolve));
  t.after(() => new Promise<void>((resolve) => blocker.close(() => resolve())));
  const port = (blocker.address() as AddressInfo).port;
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'lode-metrics-'));
  t.after(() => fs.rm(root, { recursive: true, force: true }));
  await fs.mkdir(path.join(root, 'pool'));
  await fs.mkdir(path.join(root, 'kubelet'));

  const proc = spawn(process.execPath, [
    LODE_CLI, 'driver', '--endpoint', `unix://${path.join(root, 'csi.sock')}`, '--node-id', 'node-m',
    '--pool', `fast=${path.join(root, 'pool')},size=64Mi`, '--target-root', path.join(root, 'kubelet'),
    '--metrics-address', `127.0.0.1:${port}`,
  ], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  proc.stderr.setEncoding('utf8');
  proc.stderr.on('data', (d: string) => (stderr += d));
  const timer = setTimeout(() => proc.kill('SIGKILL'), 20_000);
  const code = await new Promise<number | null>((resolve) => proc.once('exit', (c) => resolve(c)));
  clearTimeout(timer);
  assert.equal(code, 1, stderr);
  assert.match(stderr, new RegExp(`127\\.0\\.0\\.1:${port}: port ${port} is already in use`));
});
