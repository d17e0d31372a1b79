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

/** Creates and stages a volume; returns its loop device and the call that takes it down again over CSI. */
async function stagedDevice(h: DriverHarness, name: string, pool?: string): Promise<{ device: string; remove: () => Promise<void> }> {
  const v = await createVolume(h, name, 16 * MiB, pool === undefined ? {} : { parameters: { pool } });
  const staging = h.stagingPath(name);
  await h.client.nodeStageVolume({ volume_id: v.id, staging_target_path: staging, volume_capability: fsCap() });
  const device = (await mountAt(staging)).source;
  return {
    device,
    remove: async () => {
      await h.client.nodeUnstageVolume({ volume_id: v.id, staging_target_path: staging });
      await h.client.deleteVolume({ volume_id: v.id });
    },
  };
}

test('pools run their loop devices with direct I/O unless direct-io=off', async () => {
  const h = await DriverHarness.start({
    pools: [{ name: 'fast', size: '256Mi' }, { name: 'slow', size: '256Mi', extra: 'direct-io=off' }],
    extraArgs: ['--metrics-address', '127.0.0.1:0'],
  });
  try {
    const fast = await stagedDevice(h, 'dio-fast');
    assert.equal(dio(fast.device), '1', 'the default pool attaches with direct I/O');
    const slow = await stagedDevice(h, 'dio-slow', 'slow');
    assert.equal(dio(slow.device), '0', 'direct-io=off attaches buffered');
    const text = await metricsText(h);
    assert.match(text, /lode_pool_info\{[^}]*pool="fast"[^}]*data_path="direct-io"[^}]*\} 1/);
    assert.match(text, /lode_pool_info\{[^}]*pool="slow"[^}]*data_path="buffered"[^}]*\} 1/);
    await fast.remove();
    await slow.remove();
    assert.deepEqual(await h.loops(), []);
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
    const staged = [await stagedDevice(h, 'ram-a'), await stagedDevice(h, 'ram-b')];
    for (const s of staged) assert.equal(dio(s.device), '0');
    assert.equal(h.log.split('\n').filter((l) => l.includes('refused direct I/O')).length, 1, 'the fallback is logged once per pool');
    assert.match(await metricsText(h, since), /lode_pool_info\{[^}]*pool="fast"[^}]*data_path="buffered-fallback"[^}]*\} 1/);
    for (const s of staged) await s.remove();
    assert.deepEqual(await h.loops(), [], 'every device on the ramfs pool is detached');
  } finally {
    // The ramfs goes before the harness's lazy unmounts: a device on a detached filesystem no
    // longer names a path below the harness, so its cleanup could not find it.
    await h.stop();
    for (const d of await h.loops()) await run('losetup', ['-d', d]).catch(() => undefined);
    await run('umount', [h.poolDir('fast')]).catch(() => undefined);
    await h.cleanup();
  }
});
