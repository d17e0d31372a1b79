// A symlink planted under the target root must not lead a stage, publish or unpublish outside it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { status } from '@grpc/grpc-js';
import { grpcCode } from '../../src/csi/client.js';
import { DriverHarness, MiB, mountCap } from '../helpers/driver-harness.js';

test('targets that resolve through a symlink to outside the target root or into a pool are refused, and nothing is touched', async () => {
  const h = await DriverHarness.start();
  try {
    const outside = path.join(h.root, 'outside');
    await fs.mkdir(outside);
    await fs.writeFile(path.join(outside, 'precious'), 'keep');
    await fs.mkdir(path.join(h.kubeletDir, 'pods'), { recursive: true });
    await fs.symlink(outside, path.join(h.kubeletDir, 'pods', 'evil'));
    await fs.symlink(h.poolDir('fast'), path.join(h.kubeletDir, 'pods', 'pool-link'));

    const v = await h.client.createVolume({ name: 'sym', capacity_range: { required_bytes: 16 * MiB }, volume_capabilities: [mountCap()] });
    const id = v.volume?.volume_id ?? '';
    const before = { files: await h.poolFiles(), mounts: await h.mounts(), loops: await h.loops() };

    for (const staging of [path.join(h.kubeletDir, 'pods', 'evil', 'stage'), path.join(h.kubeletDir, 'pods', 'pool-link', 'stage')]) {
      await assert.rejects(
        h.client.nodeStageVolume({ volume_id: id, staging_target_path: staging, volume_capability: mountCap() }),
        (err: unknown) => grpcCode(err) === status.INVALID_ARGUMENT,
      );
    }
    await assert.rejects(
      h.client.nodeUnpublishVolume({ volume_id: id, target_path: path.join(h.kubeletDir, 'pods', 'evil') }),
      (err: unknown) => grpcCode(err) === status.INVALID_ARGUMENT,
    );

    assert.deepEqual(await fs.readdir(outside), ['precious'], 'nothing created or removed outside the root');
    assert.equal(await fs.readFile(path.join(outside, 'precious'), 'utf8'), 'keep');
    assert.deepEqual({ files: await h.poolFiles(), mounts: await h.mounts(), loops: await h.loops() }, before);

    // The same calls on a plain path under the root work.
    const staging = h.stagingPath('plain');
    await h.client.nodeStageVolume({ volume_id: id, staging_target_path: staging, volume_capability: mountCap() });
    assert.ok((await h.mounts()).includes(staging));
    // Publish follows the same rule: a target through the link is refused, even with a staged volume to bind.
    for (const target of [path.join(h.kubeletDir, 'pods', 'evil', 'mount'), path.join(h.kubeletDir, 'pods', 'pool-link', 'mount')]) {
      await assert.rejects(
        h.client.nodePublishVolume({ volume_id: id, staging_target_path: staging, target_path: target, volume_capability: mountCap() }),
        (err: unknown) => grpcCode(err) === status.INVALID_ARGUMENT,
      );
    }
    assert.deepEqual(await fs.readdir(outside), ['precious'], 'publish created nothing outside the root');
    assert.deepEqual(await h.mounts(), [staging], 'publish mounted nothing');
    await h.client.nodeUnstageVolume({ volume_id: id, staging_target_path: staging });
    await h.client.deleteVolume({ volume_id: id });
  } finally {
    await h.cleanup();
  }
});
