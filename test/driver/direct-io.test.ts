// Loop devices read and write their images with direct I/O; a filesystem that refuses it falls back to buffered I/O, said once in the log and in a metric.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { DriverHarness } from '../helpers/driver-harness.js';
import { run } from '../../src/sys/exec.js';
import { createVolume, fsCap, httpGet, metricsPort, MiB, mountAt } from './support.js';

function dio(device: string): string {
  return readFileSync(path.join('/sys/block', path.basename(device), 'loop', 'dio'), 'utf8').trim();
}

async function metricsText(h: DriverHarness, since = 0): Promise<string> {
  return (await httpGet(await metricsPort(h, since), '/metrics')).body;
}

async function stagedDevice(h: DriverHarness, name: string): Promise<string> {
  const v = await createVolume(h, name, 16 * MiB);
  const staging = h.stagingPath(name);
  await h.client.nodeStageVolume({ volume_id: v.id, staging_target_path: staging, volume_capability: fsCap() });
  return (await mountAt(staging)).source;
}

test('pools run their loop devices with direct I/O unless direct-io=off', async () => {
  const h = await DriverHarness.start({
    pools: [{ name: 'fast', size: '256Mi' }, { name: 'slow', size: '256Mi', extra: 'direct-io=off' }],
    extraArgs: ['--metrics-address', '127.0.0.1:0'],
  });
  try {
    assert.equal(dio(await stagedDevice(h, 'dio-fast')), '1', 'the default pool attaches with direct I/O');
    const v = await createVolume(h, 'dio-slow', 16 * MiB, { parameters: { pool: 'slow' } });
    const staging = h.stagingPath('dio-slow');
    await h.client.nodeStageVolume({ volume_id: v.id, staging_target_path: staging, volume_capability: fsCap() });
    assert.equal(dio((await mountAt(staging)).source), '0', 'direct-io=off attaches buffered');
    const text = await metricsText(h);
    assert.match(text, /lode_pool_info\{[^}]*pool="fast"[^}]*data_path="direct-io"[^}]*\} 1/);
    assert.match(text, /lode_pool_info\{[^}]*pool="slow"[^}]*data_path="buffered"[^}]*\} 1/);
  } finally {
    await h.cleanup();
  }
});

test('a pool on a filesystem without direct I/O still attaches, buffered, and says so once', async () => {
  const h = await DriverHarness.start({ pools: [{ name: 'fast', size: '256Mi' }], extraArgs: ['--metrics-address', '127.0.0.1:0'] });
  // ramfs has no O_DIRECT: the kernel refuses a direct-I/O loop device on it outright.
  await h.stop();
  await run('mount', ['-t', 'ramfs', 'lode-test-ramfs', h.poolDir('fast')]);
  try {
    const since = h.log.length;
    await h.startProcess();
    for (const name of ['ram-a', 'ram-b']) assert.equal(dio(await stagedDevice(h, name)), '0');
    assert.equal(h.log.split('\n').filter((l) => l.includes('refused direct I/O')).length, 1, 'the fallback is logged once per pool');
    assert.match(await metricsText(h, since), /lode_pool_info\{[^}]*pool="fast"[^}]*data_path="buffered-fallback"[^}]*\} 1/);
  } finally {
    await h.cleanup();
  }
});
