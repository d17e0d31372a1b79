// A caller's mistakes the kernel or mkfs would catch late are INVALID_ARGUMENT up front, and a refused stage leaves nothing attached.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { DriverHarness } from '../helpers/driver-harness.js';
import type * as csi from '../../src/csi/types.js';
import { createVolume, diskState, expectCode, fsCap, MiB, status } from './support.js';

let h: DriverHarness;
before(async () => {
  h = await DriverHarness.start({ pools: [{ name: 'fast', size: '1Gi' }] });
});
after(async () => {
  await h?.cleanup();
});

test('mount flags the filesystem refuses are INVALID_ARGUMENT at stage, and a refused stage leaves no loop device', async () => {
  const v = await createVolume(h, 'bad-flags', 16 * MiB);
  const staging = h.stagingPath('bad-flags');
  const before = await diskState(h);
  for (const flag of ['uid=0', 'mode=4777', 'dax', 'nouuid', 'BIND', 'journal_path=/dev/null']) {
    const message = await expectCode(h.client.nodeStageVolume({ volume_id: v.id, staging_target_path: staging, volume_capability: fsCap('ext4', 'SINGLE_NODE_WRITER', [flag]) }),
      status.INVALID_ARGUMENT, `stage with ${flag}`);
    assert.match(message, /mount_flags/, 'the message names the field');
    assert.deepEqual(await diskState(h), before, `a stage refused for ${flag} leaves no device or mount behind`);
  }
  await h.client.nodeStageVolume({ volume_id: v.id, staging_target_path: staging, volume_capability: fsCap() });
  // Publications are binds, whose remount takes only per-mount options: the kernel ignores the
  // rest there, so only the stage, which mounts the filesystem, can be refused for them.
  await h.client.nodeUnstageVolume({ volume_id: v.id, staging_target_path: staging });
  await h.client.deleteVolume({ volume_id: v.id });
});

test('staging a volume too small for xfs as xfs is INVALID_ARGUMENT, before mkfs runs', async () => {
  const v = await createVolume(h, 'small-for-xfs', 16 * MiB, { cap: { mount: { fs_type: '', mount_flags: [] }, access_mode: { mode: 'SINGLE_NODE_WRITER' } } });
  const staging = h.stagingPath('small-for-xfs');
  const message = await expectCode(h.client.nodeStageVolume({ volume_id: v.id, staging_target_path: staging, volume_capability: fsCap('xfs') }),
    status.INVALID_ARGUMENT, 'xfs on 16 MiB');
  assert.match(message, /xfs needs at least/);
  assert.deepEqual(await h.loops(), []);
  await h.client.deleteVolume({ volume_id: v.id });
});

test('a capability with both block and mount set is INVALID_ARGUMENT, not taken as one of them', async () => {
  const both = { block: {}, mount: { fs_type: 'ext4', mount_flags: [] }, access_mode: { mode: 'SINGLE_NODE_WRITER' } } as csi.VolumeCapability;
  await expectCode(h.client.createVolume({ name: 'both-types', volume_capabilities: [both], capacity_range: { required_bytes: 16 * MiB } }),
    status.INVALID_ARGUMENT, 'CreateVolume with block and mount');
  assert.deepEqual(await h.poolFiles(), []);
});
