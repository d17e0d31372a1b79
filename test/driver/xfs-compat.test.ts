// xfs volumes are made so that kernels older than 5.10 mount them: no bigtime, no inobtcount, no 64-bit extent counters.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { run } from '../../src/sys/exec.js';
import { DriverHarness } from '../helpers/driver-harness.js';
import { createVolume, fsCap, MiB, mountAt, stageAndPublish, teardown } from './support.js';

let h: DriverHarness;
before(async () => { h = await DriverHarness.start({ pools: [{ name: 'fast', size: '1Gi' }] }); });
after(async () => { await h?.cleanup(); });

test('a staged xfs volume has bigtime=0, inobtcount=0 and nrext64=0, and its superblock lists neither feature', async () => {
  const v = await createVolume(h, 'xfs-compat', 300 * MiB, { cap: fsCap('xfs') });
  const { staging } = await stageAndPublish(h, v.id, 'xfs-compat', fsCap('xfs'));
  const m = await mountAt(staging);
  assert.equal(m.fsType, 'xfs');
  const info = (await run('xfs_info', [staging])).stdout;
  for (const feature of ['bigtime', 'inobtcount', 'nrext64']) {
    const value = new RegExp(`\\b${feature}=(\\d)`).exec(info)?.[1];
    assert.equal(value, '0', `${feature} in xfs_info:\n${info}`);
  }
  // The superblock's feature list as the kernel reads it (xfs_db reads the device, read-only).
  const version = (await run('xfs_db', ['-r', '-c', 'version', m.source])).stdout;
  assert.match(version, /\bV5\b/, version);
  assert.doesNotMatch(version, /BIGTIME|INOBTCNT|NREXT64/, version);
  await teardown(h, v.id, 'xfs-compat');
});
