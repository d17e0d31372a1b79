// A thick lvm pool's classic snapshot whose copy-on-write area overflows: LVM drops it, and a restore from it is refused, FAILED_PRECONDITION, saying why.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { LV_PREFIX } from '../../src/backends/lvm/lvm-backend.js';
import { createVolume, expectCode, fsCap, stageAndPublish, status, teardown, writeRandomFile } from '../driver/support.js';
import { startOnMedium } from '../conformance/checks.js';
import { lvmMedium, lvmTool } from './lvm-fixtures.js';
import { guestOnly } from './support.js';

const MiB = 2 ** 20;
const POOL = 'lv';
const EXT4 = fsCap('ext4');

test('thick: a snapshot whose area overflows is invalid; restoring it is FAILED_PRECONDITION naming the overflow; it still deletes', { skip: guestOnly }, async (t) => {
  // One extent of area (4 MiB) for a 32 MiB volume: 12 MiB of new data cannot fit.
  const medium = await lvmMedium({ imageMiB: 256, extra: 'snapshot-size=4Mi' });
  const h = await startOnMedium(t, medium, { nodeId: 'node-lvm', pool: POOL });
  const v = await createVolume(h, 'overflow-src', 32 * MiB, { cap: EXT4 });
  const p = await stageAndPublish(h, v.id, 'src', EXT4);
  await writeRandomFile(path.join(p.target, 'before'), MiB);
  const snap = (await h.client.createSnapshot({ name: 'overflow-snap', source_volume_id: v.id, parameters: {} })).snapshot;
  assert.ok(snap?.ready_to_use);
  await writeRandomFile(path.join(p.target, 'after'), 12 * MiB);

  const { stdout } = await lvmTool('lvs', ['--noheadings', '-o', 'lv_attr', `${medium.vg}/${LV_PREFIX}${snap.snapshot_id}`]);
  assert.equal(stdout.trim()[4], 'I', `LVM marks the overflowed snapshot invalid (lv_attr ${stdout.trim()})`);
  const msg = await expectCode(h.client.createVolume({
    name: 'overflow-restore', capacity_range: { required_bytes: 32 * MiB }, volume_capabilities: [EXT4], parameters: { pool: POOL },
    volume_content_source: { snapshot: { snapshot_id: snap.snapshot_id } },
  }), status.FAILED_PRECONDITION, 'a restore of an invalid snapshot is the operator\'s to replace, not a fault');
  assert.match(msg, /overflowed/);
  assert.match(msg, /snapshot-size=/);
  assert.deepEqual((await h.client.listVolumes({})).entries.map((e) => e.volume?.volume_id), [v.id], 'the refused restore left no volume');

  await h.client.deleteSnapshot({ snapshot_id: snap.snapshot_id });
  await teardown(h, v.id, 'src');
  const left = await lvmTool('lvs', ['--noheadings', '-o', 'lv_name', medium.vg]);
  assert.equal(left.stdout.trim(), '', 'no LV left');
});
