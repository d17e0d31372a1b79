// DriverMetrics against a fake pool source: scraped figures must equal what the pools report.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { register as globalRegistry } from 'prom-client';
import { DriverMetrics, METRIC_NAMES, shortMethodName } from '../../src/metrics/driver-metrics.js';
import type { PoolStats, PoolStatsSource } from '../../src/pool/pool-stats.js';
import { findSamples, parseExposition, sampleValue } from './prom-text.js';

const GiB = 1024 ** 3;

/** A pool source whose figures the test sets, counting how often it is asked. */
class FakePools implements PoolStatsSource {
  calls = 0;
  constructor(public pools: PoolStats[]) {}
  poolStats(): PoolStats[] {
    this.calls++;
    return this.pools.map((p) => ({ ...p }));
  }
}

/** A loop pool, a dir pool and an lvm thin pool. */
function threePools(): FakePools {
  return new FakePools([
    { name: 'fast', backend: 'loopfile', capacityBytes: 10 * GiB, allocatedBytes: 3 * GiB, availableBytes: 7 * GiB, volumes: 2, quarantinedVolumes: 0, dataPath: 'direct-io' },
    { name: 'bulk', backend: 'dir', capacityBytes: 100 * GiB, allocatedBytes: 0, availableBytes: 100 * GiB, volumes: 0, quarantinedVolumes: 0, dataPath: 'buffered' },
    {
      name: 'thin', backend: 'lvm', capacityBytes: 40 * GiB, allocatedBytes: 30 * GiB, availableBytes: 6 * GiB, volumes: 3, quarantinedVolumes: 0, dataPath: 'lvm-thin',
      thinPool: { dataPercent: 42.5, metadataPercent: 7.25 },
    },
  ]);
}

test('thin pool fullness is a ratio per thin pool, and no series for pools without one', async () => {
  const s = parseExposition(await new DriverMetrics(threePools(), { driverName: 'lode.csi.dev', nodeId: 'node-a' }).metrics());
  assert.equal(sampleValue(s, METRIC_NAMES.thinDataUsed, { pool: 'thin', backend: 'lvm' }), 0.425);
  assert.equal(sampleValue(s, METRIC_NAMES.thinMetadataUsed, { pool: 'thin', backend: 'lvm' }), 0.0725);
  for (const pool of ['fast', 'bulk']) {
    assert.equal(findSamples(s, METRIC_NAMES.thinDataUsed, { pool }).length, 0, `${pool} has no thin pool`);
    assert.equal(findSamples(s, METRIC_NAMES.thinMetadataUsed, { pool }).length, 0);
  }
});

test('escapable limits: 1 for a pool that declares a way past a volume\'s size, 0 otherwise; caught escapes as a counter of every pool', async () => {
  const pools = threePools();
  pools.pools[1] = { ...pools.pools[1]!, escapableBy: 'a subvolume made inside the volume', limitEscapes: 2 };
  const s = parseExposition(await new DriverMetrics(pools, { driverName: 'lode.csi.dev', nodeId: 'node-a' }).metrics());
  assert.equal(sampleValue(s, METRIC_NAMES.limitEscapable, { pool: 'bulk', backend: 'dir' }), 1);
  assert.equal(sampleValue(s, METRIC_NAMES.limitEscapable, { pool: 'fast' }), 0, 'present at 0, so an alert needs no absent()');
  assert.equal(sampleValue(s, METRIC_NAMES.limitEscapes, { pool: 'bulk', backend: 'dir' }), 2);
  assert.equal(sampleValue(s, METRIC_NAMES.limitEscapes, { pool: 'thin' }), 0);
});

test('every metric this module defines is in the metrics table of docs/operations.md', async () => {
  const { readFile } = await import('node:fs/promises');
  const doc = await readFile(new URL('../../../docs/operations.md', import.meta.url), 'utf8');
  for (const name of Object.values(METRIC_NAMES)) assert.match(doc, new RegExp(`^\\| \`${name}\` \\|`, 'm'), `${name} has a row`);
});

test('pool gauges report what the pool source says at scrape time', async () => {
  const pools = threePools();
  const metrics = new DriverMetrics(pools, { driverName: 'lode.csi.dev', nodeId: 'node-a' });
  let s = parseExposition(await metrics.metrics());
  for (const p of pools.pools) {
    const labels = { pool: p.name, backend: p.backend };
    assert.equal(sampleValue(s, METRIC_NAMES.poolCapacity, labels), p.capacityBytes);
    assert.equal(sampleValue(s, METRIC_NAMES.poolAllocated, labels), p.allocatedBytes);
    assert.equal(sampleValue(s, METRIC_NAMES.poolAvailable, labels), p.availableBytes);
    assert.equal(sampleValue(s, METRIC_NAMES.poolVolumes, labels), p.volumes);
    assert.equal(sampleValue(s, METRIC_NAMES.quarantinedVolumes, labels), p.quarantinedVolumes, 'reported even when 0, for alerts');
    assert.equal(sampleValue(s, METRIC_NAMES.poolInfo, { ...labels, data_path: p.dataPath }), 1, 'the info metric names the data path');
  }

  // A volume is created between scrapes: the next scrape shows it, nothing is cached across scrapes.
  pools.pools[0] = { ...pools.pools[0]!, allocatedBytes: 4 * GiB, availableBytes: 6 * GiB, volumes: 3, quarantinedVolumes: 1 };
  s = parseExposition(await metrics.metrics());
  assert.equal(sampleValue(s, METRIC_NAMES.poolAllocated, { pool: 'fast' }), 4 * GiB);
  assert.equal(sampleValue(s, METRIC_NAMES.poolAvailable, { pool: 'fast' }), 6 * GiB);
  assert.equal(sampleValue(s, METRIC_NAMES.poolVolumes, { pool: 'fast' }), 3);
  assert.equal(sampleValue(s, METRIC_NAMES.quarantinedVolumes, { pool: 'fast' }), 1);
});

test('a pool that disappears from the source disappears from the metrics', async () => {
  const pools = threePools();
  const metrics = new DriverMetrics(pools);
  assert.equal(findSamples(parseExposition(await metrics.metrics()), METRIC_NAMES.poolCapacity).length, 3);
  pools.pools = pools.pools.filter((p) => p.name !== 'bulk');
  const s = parseExposition(await metrics.metrics());
  assert.equal(findSamples(s, METRIC_NAMES.poolCapacity, { pool: 'bulk' }).length, 0);
  assert.equal(findSamples(s, METRIC_NAMES.poolVolumes, { pool: 'bulk' }).length, 0);
  assert.equal(findSamples(s, METRIC_NAMES.poolCapacity, { pool: 'fast' }).length, 1);
});

test('one scrape reads the pools once, so the four gauges describe the same instant', async () => {
  const pools = threePools();
  const metrics = new DriverMetrics(pools);
  pools.calls = 0;
  await metrics.metrics();
  assert.equal(pools.calls, 1);
});

test('RPCs are counted and timed by short method name and status code', async () => {
  const metrics = new DriverMetrics(threePools());
  metrics.onRpc('/csi.v1.Controller/CreateVolume', 'OK', 0.02);
  metrics.onRpc('/csi.v1.Controller/CreateVolume', 'OK', 0.3);
  metrics.onRpc('CreateVolume', 'RESOURCE_EXHAUSTED', 0.004);
  metrics.onRpc('/csi.v1.Node/NodeStageVolume', 'OK', 7);
  metrics.onRpc('/csi.v1.Node/NodeStageVolume', 'OK', -0.5); // clock stepped back

  const s = parseExposition(await metrics.metrics());
  assert.equal(sampleValue(s, METRIC_NAMES.rpcTotal, { method: 'CreateVolume', code: 'OK' }), 2);
  assert.equal(sampleValue(s, METRIC_NAMES.rpcTotal, { method: 'CreateVolume', code: 'RESOURCE_EXHAUSTED' }), 1);
  assert.equal(sampleValue(s, METRIC_NAMES.rpcTotal, { method: 'NodeStageVolume', code: 'OK' }), 2);

  const d = METRIC_NAMES.rpcDuration;
  assert.equal(sampleValue(s, `${d}_count`, { method: 'CreateVolume', code: 'OK' }), 2);
  assert.ok(Math.abs(sampleValue(s, `${d}_sum`, { method: 'CreateVolume', code: 'OK' }) - 0.32) < 1e-9);
  // 0.02 s falls in le=0.025, 0.3 s does not; both are in le=0.5.
  assert.equal(sampleValue(s, `${d}_bucket`, { method: 'CreateVolume', code: 'OK', le: '0.025' }), 1);
  assert.equal(sampleValue(s, `${d}_bucket`, { method: 'CreateVolume', code: 'OK', le: '0.5' }), 2);
  assert.equal(sampleValue(s, `${d}_bucket`, { method: 'CreateVolume', code: 'OK', le: '+Inf' }), 2);
  // The negative duration was recorded as zero, not dropped and not negative.
  assert.equal(sampleValue(s, `${d}_sum`, { method: 'NodeStageVolume', code: 'OK' }), 7);
  assert.equal(sampleValue(s, `${d}_bucket`, { method: 'NodeStageVolume', code: 'OK', le: '0.001' }), 1);
  // No series for calls that never happened.
  assert.equal(findSamples(s, METRIC_NAMES.rpcTotal, { method: 'DeleteVolume' }).length, 0);
});

test('every series carries the driver name and node id; Lode metrics are prefixed lode_', async () => {
  const metrics = new DriverMetrics(threePools(), { driverName: 'lode.csi.dev', nodeId: 'node-a' });
  metrics.onRpc('Probe', 'OK', 0.001);
  const s = parseExposition(await metrics.metrics());
  assert.ok(s.length > 20, `expected many samples, got ${s.length}`);
  for (const sample of s) {
    assert.equal(sample.labels['driver_name'], 'lode.csi.dev', sample.name);
    assert.equal(sample.labels['node_id'], 'node-a', sample.name);
  }
  const ours = new Set(s.map((x) => x.name).filter((n) => !n.startsWith('process_') && !n.startsWith('nodejs_')));
  for (const name of ours) assert.match(name, /^lode_/);
  for (const name of Object.values(METRIC_NAMES)) {
    assert.ok([...ours].some((n) => n.startsWith(name)), `${name} missing from the exposition`);
  }
});

test('default process metrics are exposed', async () => {
  const s = parseExposition(await new DriverMetrics(threePools()).metrics());
  assert.ok(findSamples(s, 'process_cpu_user_seconds_total').length === 1);
  assert.ok(findSamples(s, 'process_resident_memory_bytes').length === 1);
  assert.ok(findSamples(s, 'nodejs_heap_size_used_bytes').length === 1);
});

test('each instance has its own registry, never the global one', async () => {
  const a = new DriverMetrics(threePools(), { driverName: 'd', nodeId: 'a' });
  const b = new DriverMetrics(threePools(), { driverName: 'd', nodeId: 'b' });
  a.onRpc('CreateVolume', 'OK', 1);
  const sb = parseExposition(await b.metrics());
  assert.equal(findSamples(sb, METRIC_NAMES.rpcTotal).length, 0);
  assert.notEqual(a.registry, globalRegistry);
  assert.equal(globalRegistry.getSingleMetric(METRIC_NAMES.rpcTotal), undefined);
  assert.match(a.contentType, /^text\/plain/);
});

test('shortMethodName keeps the part after the last slash', () => {
  assert.equal(shortMethodName('/csi.v1.Identity/Probe'), 'Probe');
  assert.equal(shortMethodName('Probe'), 'Probe');
});
