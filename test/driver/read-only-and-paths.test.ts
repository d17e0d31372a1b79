// Read-only is read-only whatever the mount flags say; one volume per staging path and per target, even for concurrent calls.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { DriverHarness } from '../helpers/driver-harness.js';
import { createVolume, fsCap, MiB, mountsAt, outcome, status, expectCode } from './support.js';

let h: DriverHarness;
before(async () => {
  h = await DriverHarness.start({ pools: [{ name: 'fast', size: '512Mi' }] });
});
after(async () => {
  await h?.cleanup();
});

async function writable(dir: string): Promise<boolean> {
  try {
    await fs.writeFile(path.join(dir, 'probe'), 'x');
    await fs.rm(path.join(dir, 'probe'));
    return true;
  } catch (err) {
    assert.equal((err as NodeJS.ErrnoException).code, 'EROFS');
    return false;
  }
}

test('readonly publish with the flag rw, and reader-only stage and publish with rw, are read-only mounts', async () => {
  const v = await createVolume(h, 'ro-flags', 16 * MiB);
  const staging = h.stagingPath('ro-flags');
  await h.client.nodeStageVolume({ volume_id: v.id, staging_target_path: staging, volume_capability: fsCap() });
  const target = h.targetPath('ro-flags');
  await h.client.nodePublishVolume({
    volume_id: v.id, staging_target_path: staging, target_path: target, readonly: true, volume_capability: fsCap('ext4', 'SINGLE_NODE_WRITER', ['rw']),
  });
  assert.ok((await mountsAt(target))[0]?.options.includes('ro'), 'the publication is mounted ro');
  assert.equal(await writable(target), false, 'a pod cannot write through a readonly publication');
  await h.client.nodeUnpublishVolume({ volume_id: v.id, target_path: target });
  await h.client.nodeUnstageVolume({ volume_id: v.id, staging_target_path: staging });

  const reader = fsCap('ext4', 'SINGLE_NODE_READER_ONLY', ['rw']);
  await h.client.nodeStageVolume({ volume_id: v.id, staging_target_path: staging, volume_capability: reader });
  assert.ok((await mountsAt(staging))[0]?.options.includes('ro'), 'the reader-only staging mount is ro');
  assert.equal(await writable(staging), false);
  await h.client.nodePublishVolume({ volume_id: v.id, staging_target_path: staging, target_path: target, volume_capability: reader });
  assert.equal(await writable(target), false, 'a reader-only publication is read-only');
  await h.client.nodeUnpublishVolume({ volume_id: v.id, target_path: target });
  await h.client.nodeUnstageVolume({ volume_id: v.id, staging_target_path: staging });
  await h.client.deleteVolume({ volume_id: v.id });
});

test('two volumes staged, or published, at one path at the same time: one wins, nothing stacks', async () => {
  const a = await createVolume(h, 'same-path-a', 16 * MiB);
  const b = await createVolume(h, 'same-path-b', 16 * MiB);
  for (let round = 0; round < 5; round++) {
    const staging = h.stagingPath(`same-${round}`);
    const results = await Promise.allSettled([a, b].map((v) =>
      h.client.nodeStageVolume({ volume_id: v.id, staging_target_path: staging, volume_capability: fsCap() })));
    const codes = results.map(outcome);
    assert.equal(codes.filter((c) => c === 'OK').length, 1, `round ${round}: exactly one stage succeeds (${codes.join(', ')})`);
    assert.ok(codes.every((c) => c === 'OK' || c === 'ABORTED' || c === 'FAILED_PRECONDITION'), codes.join(', '));
    assert.equal((await mountsAt(staging)).length, 1, `round ${round}: one mount at the staging path`);
    const winner = results[0]?.status === 'fulfilled' ? a : b;
    const loser = winner === a ? b : a;
    // The loser retried now meets the winner's mount and is refused, not stacked.
    await expectCode(h.client.nodeStageVolume({ volume_id: loser.id, staging_target_path: staging, volume_capability: fsCap() }),
      status.FAILED_PRECONDITION, 'stage over another volume');
    await fs.writeFile(path.join(staging, 'who'), winner.id);
    // Two publishes of the winner and the loser to one target: the loser is not staged, so only the
    // winner can be published; two different targets for the same volume share the lock on neither.
    const otherStaging = h.stagingPath(`same-${round}-other`);
    await h.client.nodeStageVolume({ volume_id: loser.id, staging_target_path: otherStaging, volume_capability: fsCap() });
    const target = h.targetPath(`same-${round}`);
    const pubs = await Promise.allSettled([
      h.client.nodePublishVolume({ volume_id: winner.id, staging_target_path: staging, target_path: target, volume_capability: fsCap() }),
      h.client.nodePublishVolume({ volume_id: loser.id, staging_target_path: otherStaging, target_path: target, volume_capability: fsCap() }),
    ]);
    const pubCodes = pubs.map(outcome);
    assert.equal(pubCodes.filter((c) => c === 'OK').length, 1, `round ${round}: exactly one publish succeeds (${pubCodes.join(', ')})`);
    assert.equal((await mountsAt(target)).length, 1, `round ${round}: one mount at the target`);
    const published = pubs[0]?.status === 'fulfilled' ? winner : loser;
    const seen = await fs.readFile(path.join(target, 'who'), 'utf8').catch(() => 'none');
    assert.equal(seen === winner.id, published === winner, 'the target shows the volume that was published there');
    await h.client.nodeUnpublishVolume({ volume_id: published.id, target_path: target });
    await h.client.nodeUnstageVolume({ volume_id: winner.id, staging_target_path: staging });
    await h.client.nodeUnstageVolume({ volume_id: loser.id, staging_target_path: otherStaging });
  }
  assert.deepEqual(await h.mounts(), []);
  await h.client.deleteVolume({ volume_id: a.id });
  await h.client.deleteVolume({ volume_id: b.id });
});

test('staging again read-only over a read-write staging is ALREADY_EXISTS; an identical retry with the flag ro is not', async () => {
  const v = await createVolume(h, 'restage-ro', 16 * MiB);
  const staging = h.stagingPath('restage-ro');
  await h.client.nodeStageVolume({ volume_id: v.id, staging_target_path: staging, volume_capability: fsCap() });
  await expectCode(h.client.nodeStageVolume({ volume_id: v.id, staging_target_path: staging, volume_capability: fsCap('ext4', 'SINGLE_NODE_READER_ONLY') }),
    status.ALREADY_EXISTS, 'reader-only stage over a writable staging');
  assert.equal(await writable(staging), true, 'the staging mount is left as it was');
  await h.client.nodeUnstageVolume({ volume_id: v.id, staging_target_path: staging });
  const roFlag = fsCap('ext4', 'SINGLE_NODE_WRITER', ['ro']);
  await h.client.nodeStageVolume({ volume_id: v.id, staging_target_path: staging, volume_capability: roFlag });
  await h.client.nodeStageVolume({ volume_id: v.id, staging_target_path: staging, volume_capability: roFlag });
  const target = h.targetPath('restage-ro');
  const publish = () => h.client.nodePublishVolume({ volume_id: v.id, staging_target_path: staging, target_path: target, volume_capability: roFlag });
  await publish();
  await publish(); // a retry of a publication that is read-only through its flags is the same publication
  await h.client.nodeUnpublishVolume({ volume_id: v.id, target_path: target });
  await h.client.nodeUnstageVolume({ volume_id: v.id, staging_target_path: staging });
  await h.client.deleteVolume({ volume_id: v.id });
});

test('a target directory with content is not published over, and one written to while unmounted is kept at unpublish, which still succeeds', async () => {
  const v = await createVolume(h, 'full-target', 16 * MiB);
  const staging = h.stagingPath('full-target');
  await h.client.nodeStageVolume({ volume_id: v.id, staging_target_path: staging, volume_capability: fsCap() });
  const target = h.targetPath('full-target');
  await fs.mkdir(target, { recursive: true });
  await fs.writeFile(path.join(target, 'theirs'), 'not lode\'s');
  await expectCode(h.client.nodePublishVolume({ volume_id: v.id, staging_target_path: staging, target_path: target, volume_capability: fsCap() }),
    status.FAILED_PRECONDITION, 'publish over a directory with content');
  assert.deepEqual(await mountsAt(target), []);
  await fs.rm(path.join(target, 'theirs'));
  await h.client.nodePublishVolume({ volume_id: v.id, staging_target_path: staging, target_path: target, volume_capability: fsCap() });
  // Someone takes the mount down behind the driver's back and writes into the directory.
  await fs.writeFile(path.join(target, 'in-volume'), 'x');
  const { run } = await import('../../src/sys/exec.js');
  await run('umount', [target]);
  await fs.writeFile(path.join(target, 'stray'), 'x');
  await h.client.nodeUnpublishVolume({ volume_id: v.id, target_path: target });
  assert.equal(await fs.readFile(path.join(target, 'stray'), 'utf8'), 'x', 'what is not the driver\'s stays');
  await h.client.nodeUnstageVolume({ volume_id: v.id, staging_target_path: staging });
  await h.client.deleteVolume({ volume_id: v.id });
});
