// The test harness's own cleanup: whatever a failed case leaves (here a frozen filesystem) must not outlive it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DriverHarness } from '../helpers/driver-harness.js';
import { run } from '../../src/sys/exec.js';
import { listLoopDevices } from '../../src/sys/loop.js';
import { createVolume, fsCap, MiB, stageAndPublish } from './support.js';

test('cleanup after a case that left a staged filesystem frozen detaches its loop device', async () => {
  const h = await DriverHarness.start({ pools: [{ name: 'fast', size: '128Mi' }] });
  const root = h.root;
  const v = await createVolume(h, 'frozen-left', 32 * MiB);
  const { staging } = await stageAndPublish(h, v.id, 'frozen', fsCap());
  // What a driver killed mid-copy (with no restart to thaw it) leaves behind.
  await run('fsfreeze', ['--freeze', staging]);
  await h.cleanup();
  const left = (await listLoopDevices()).filter((d) => d.backingFile.startsWith(root + '/'));
  assert.deepEqual(left, [], 'no loop device of the harness is left');
});
