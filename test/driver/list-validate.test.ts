// ListVolumes (paging, tokens, created and deleted volumes) and ValidateVolumeCapabilities (confirmed or not, and errors).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { DriverHarness } from '../helpers/driver-harness.js';
import { createVolume, expectCode, fsCap, MiB, rawCap, status, TOPOLOGY_KEY } from './support.js';

const NODE = 'node-lv';
let h: DriverHarness;
before(async () => { h = await DriverHarness.start({ nodeId: NODE, pools: [{ name: 'fast', size: '512Mi' }] }); });
after(async () => { await h?.cleanup(); });

/** Walks every page of ListVolumes with `max` entries per page; returns the pages' ids. */
async function walk(max: number): Promise<string[][]> {
  const pages: string[][] = [];
  let token = '';
  for (;;) {
    const res = await h.client.listVolumes({ max_entries: max, starting_token: token });
    pages.push(res.entries.map((e) => e.volume?.volume_id ?? '?'));
    assert.ok(pages.length <= 20, 'paging does not end');
    if (res.next_token === '') return pages;
    token = res.next_token;
  }
}

test('an empty node lists nothing, with no next token', async () => {
  const res = await h.client.listVolumes();
  assert.deepEqual(res.entries, []);
  assert.equal(res.next_token, '');
});

test('ListVolumes shows created volumes with their size, pool and topology, pages through them, and forgets deleted ones', async () => {
  const created = new Map<string, number>();
  for (let i = 0; i < 5; i++) {
    const v = await createVolume(h, `lv-page-${i}`, (16 + i) * MiB);
    created.set(v.id, v.capacity);
  }
  const all = await h.client.listVolumes();
  assert.equal(all.entries.length, 5);
  assert.equal(all.next_token, '');
  for (const e of all.entries) {
    const v = e.volume;
    assert.ok(v);
    assert.equal(Number(v.capacity_bytes), created.get(v.volume_id), `capacity of ${v.volume_id}`);
    assert.equal(v.volume_context.pool, 'fast');
    assert.deepEqual(v.accessible_topology.map((t) => t.segments), [{ [TOPOLOGY_KEY]: NODE }]);
  }

  const pages = await walk(2);
  assert.deepEqual(pages.map((p) => p.length), [2, 2, 1]);
  assert.deepEqual(pages.flat().sort(), [...created.keys()].sort(), 'every volume exactly once');
  assert.deepEqual(await walk(5), [[...pages.flat()]], 'max_entries = count: one page, no token');
  assert.deepEqual((await walk(1)).flat(), pages.flat(), 'the order is stable');
  assert.deepEqual((await walk(0)).flat(), pages.flat(), 'max_entries 0 means no limit');

  const gone = pages[1]![0]!;
  await h.client.deleteVolume({ volume_id: gone });
  const after = (await h.client.listVolumes()).entries.map((e) => e.volume?.volume_id);
  assert.equal(after.length, 4);
  assert.ok(!after.includes(gone));
  for (const id of after) await h.client.deleteVolume({ volume_id: id ?? '' });
  assert.deepEqual((await h.client.listVolumes()).entries, []);
});

test('a starting token ListVolumes never issued is ABORTED; a negative max_entries is INVALID_ARGUMENT', async () => {
  const v = await createVolume(h, 'lv-token', 16 * MiB);
  for (const token of ['invalid-token', '999', '-1', '1.5', ' 1']) {
    await expectCode(h.client.listVolumes({ starting_token: token }), status.ABORTED, `token ${JSON.stringify(token)}`);
  }
  await expectCode(h.client.listVolumes({ max_entries: -1 }), status.INVALID_ARGUMENT, 'negative max_entries');
  await h.client.deleteVolume({ volume_id: v.id });
});

test('ValidateVolumeCapabilities confirms what the volume supports and echoes it back', async () => {
  const v = await createVolume(h, 'lv-validate', 16 * MiB, { parameters: { fsType: 'ext4' } });
  for (const caps of [[fsCap()], [fsCap('')], [fsCap('ext4', 'SINGLE_NODE_READER_ONLY')], [fsCap('ext4', 'SINGLE_NODE_MULTI_WRITER'), fsCap('ext4', 'SINGLE_NODE_SINGLE_WRITER')]]) {
    const res = await h.client.validateVolumeCapabilities({ volume_id: v.id, volume_capabilities: caps, volume_context: { pool: 'fast' } });
    assert.ok(res.confirmed, `not confirmed: ${res.message}`);
    assert.equal(res.confirmed.volume_capabilities.length, caps.length, 'confirmed capabilities are echoed');
    assert.deepEqual(res.confirmed.volume_context, { pool: 'fast' });
  }
  const same = await h.client.validateVolumeCapabilities({ volume_id: v.id, volume_capabilities: [fsCap()], parameters: { fsType: 'ext4' } });
  assert.ok(same.confirmed, 'the creation parameters are confirmed');
  await h.client.deleteVolume({ volume_id: v.id });
});

test('ValidateVolumeCapabilities does not confirm multi-node modes, the other access type, another filesystem or other parameters', async () => {
  const v = await createVolume(h, 'lv-unconfirmed', 16 * MiB);
  const b = await createVolume(h, 'lv-unconfirmed-block', 16 * MiB, { cap: rawCap() });
  const cases: Array<[string, string, ReturnType<typeof fsCap>, Record<string, string>]> = [
    ['multi-node reader', v.id, fsCap('ext4', 'MULTI_NODE_READER_ONLY'), {}],
    ['multi-node writer', v.id, fsCap('ext4', 'MULTI_NODE_MULTI_WRITER'), {}],
    ['block on a filesystem volume', v.id, rawCap(), {}],
    ['xfs on an ext4 volume', v.id, fsCap('xfs'), {}],
    ['other parameters', v.id, fsCap(), { pool: 'fast', fsType: 'xfs' }],
    ['mount on a block volume', b.id, fsCap(), {}],
    ['multi-node block', b.id, rawCap('MULTI_NODE_MULTI_WRITER'), {}],
  ];
  for (const [what, id, cap, parameters] of cases) {
    const res = await h.client.validateVolumeCapabilities({ volume_id: id, volume_capabilities: [cap], parameters });
    assert.equal(res.confirmed, null, `${what}: must not be confirmed`);
    assert.ok(res.message !== '', `${what}: the reason is given`);
  }
  const ok = await h.client.validateVolumeCapabilities({ volume_id: b.id, volume_capabilities: [rawCap()] });
  assert.ok(ok.confirmed, 'block on a block volume');
  await h.client.deleteVolume({ volume_id: v.id });
  await h.client.deleteVolume({ volume_id: b.id });
});

test('ValidateVolumeCapabilities: NOT_FOUND for an unknown volume, INVALID_ARGUMENT without id or capabilities', async () => {
  const v = await createVolume(h, 'lv-errors', 16 * MiB);
  await expectCode(h.client.validateVolumeCapabilities({ volume_id: 'lv-ffffffffffffffffffffffffffffffffffffffff', volume_capabilities: [fsCap()] }), status.NOT_FOUND, 'unknown volume');
  await expectCode(h.client.validateVolumeCapabilities({ volume_id: '', volume_capabilities: [fsCap()] }), status.INVALID_ARGUMENT, 'no id');
  await expectCode(h.client.validateVolumeCapabilities({ volume_id: v.id, volume_capabilities: [] }), status.INVALID_ARGUMENT, 'no capabilities');
  await h.client.deleteVolume({ volume_id: v.id });
  await expectCode(h.client.validateVolumeCapabilities({ volume_id: v.id, volume_capabilities: [fsCap()] }), status.NOT_FOUND, 'deleted volume');
});
