// A volume whose image vanished (a disk replaced, a careless rm) is reported as the node's state, not as an internal fault.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { DriverHarness } from '../helpers/driver-harness.js';
import { expectCode, fsCap, MiB, status } from './support.js';

test('staging a volume whose image is gone answers FAILED_PRECONDITION naming the image, and attaches nothing', async () => {
  const h = await DriverHarness.start();
  try {
    const v = await h.client.createVolume({ name: 'gone', capacity_range: { required_bytes: 16 * MiB }, volume_capabilities: [fsCap()] });
    const id = v.volume?.volume_id ?? '';
    await h.stop();
    await fs.rm(path.join(h.poolDir('fast'), 'volumes', `${id}.img`));
    await h.startProcess();
    const msg = await expectCode(
      h.client.nodeStageVolume({ volume_id: id, staging_target_path: h.stagingPath('gone'), volume_capability: fsCap() }),
      status.FAILED_PRECONDITION, 'stage',
    );
    assert.match(msg, /backing image .* is missing/);
    assert.ok(msg.includes(path.join(h.poolDir('fast'), 'volumes', `${id}.img`)), `the message names the image: ${msg}`);
    assert.deepEqual(await h.loops(), []);
    assert.deepEqual(await h.mounts(), []);
    // Deleting it still works and gives the space back.
    await h.client.deleteVolume({ volume_id: id });
    assert.deepEqual(await h.poolFiles(), []);
    assert.equal(Number((await h.client.getCapacity({ parameters: {} })).available_capacity), 1024 * MiB, 'the whole 1Gi pool is free again');
  } finally {
    await h.cleanup();
  }
});
