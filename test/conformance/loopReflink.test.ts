// Snapshot conformance of loop pools on XFS with reflink: snapshots, restores and clones are reflinks of the images, not copies.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { runConformance } from './suite.js';
import { loopFixture, missingPrerequisite } from './fixtures.js';
import { mountedImage } from './image-medium.js';
import type { BackendFixture, PoolMedium } from './fixture.js';
import { available, createVolume, fsCap, MiB, stageAndPublish, teardown, writeRandomFile } from '../driver/support.js';
import { POOL, startDriver } from './checks.js';

/** A loop pool whose directory is on a fresh XFS made with reflink on (the default of current mkfs.xfs, asked for anyway). */
const loopOnReflinkXfs: BackendFixture = {
  ...loopFixture,
  name: 'loop-on-xfs-reflink',
  async setup(): Promise<PoolMedium> {
    const m = await mountedImage('xfs', 1536, ['mkfs.xfs', '-q', '-f', '-m', 'reflink=1']);
    const dir = path.join(m.mountPoint, 'lode');
    await fs.mkdir(dir);
    return { pool: { dir, size: '1Gi' }, cleanup: m.cleanup };
  },
  // A reflink is a point in time by itself: no filesystem is frozen around it.
  capabilities: { ...loopFixture.capabilities, snapshots: { independent: true, notReached: ['snapshot:frozen', 'clone:frozen'] } },
  unavailable: () => missingPrerequisite(['losetup', 'mkfs.ext4', 'mkfs.xfs']),
};

runConformance(loopOnReflinkXfs, { cases: ['snapshots', 'snapshot-crash-points'] });

/**
 * How each kind of copy is made and charged: the data the image holds (for a reflink, the
 * written blocks it shares, each of which the source needs anew when it rewrites it), not the
 * image's preallocated size.
 */
for (const [fixture, method] of [[loopOnReflinkXfs, 'reflink'], [loopFixture, 'copy']] as const) {
  test(`${fixture.name}: a snapshot is a ${method}, charged the data it holds`, async (t) => {
    const why = await fixture.unavailable();
    if (why !== undefined) return t.skip(why);
    const c = await startDriver(t, fixture);
    const before = await available(c.h, { pool: POOL });
    const cap = fsCap(c.fsType);
    const v = await createVolume(c.h, 'charge-src', 128 * MiB, { cap });
    const p = await stageAndPublish(c.h, v.id, 'src', cap);
    await writeRandomFile(path.join(p.target, 'data'), 8 * MiB);
    const free = await available(c.h, { pool: POOL });
    const snap = (await c.h.client.createSnapshot({ name: 'charge-snap', source_volume_id: v.id, parameters: {} })).snapshot;
    assert.ok(snap);
    const record = JSON.parse(await fs.readFile(path.join(c.poolDir, 'snapshots', `${snap.snapshot_id}.json`), 'utf8')) as { backing?: { method?: string } };
    assert.equal(record.backing?.method, method);
    const charged = free - (await available(c.h, { pool: POOL }));
    assert.ok(charged >= 8 * MiB && charged < 64 * MiB, `charged about the data written (8 MiB and the filesystem's own), not the ${v.capacity}-byte image: ${charged}`);
    await c.h.client.deleteSnapshot({ snapshot_id: snap.snapshot_id });
    await teardown(c.h, v.id, 'src');
    assert.equal(await available(c.h, { pool: POOL }), before, 'all capacity back');
  });
}
