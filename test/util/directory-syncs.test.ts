// Group commit of directory fsyncs: callers arriving during an fsync share the next one, never the running one; directories do not wait for each other; a failure reaches everyone who shared it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DirectorySyncs } from '../../src/util/directory-syncs.js';
import { syncDirectory, writeFileAtomic } from '../../src/util/atomic-file.js';

/** A fake fsync per call, each finished (or failed) by the test. */
function controlledSyncs() {
  const calls: Array<{ dir: string; finish: () => void; fail: (e: Error) => void }> = [];
  const syncs = new DirectorySyncs((dir) => new Promise<void>((resolve, reject) => {
    calls.push({ dir, finish: resolve, fail: reject });
  }));
  return { syncs, calls };
}

/** Lets every settled promise's callbacks run (no timers involved). */
async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}

/** Tracks whether a promise has settled, and how. */
function watch(p: Promise<void>) {
  const s: { state: 'pending' | 'ok' | 'failed'; error?: Error } = { state: 'pending' };
  p.then(() => { s.state = 'ok'; }, (e: Error) => { s.state = 'failed'; s.error = e; });
  return s;
}

test('callers that arrive while a directory fsync runs share one fsync that starts after it, and resolve only when that one is done', async () => {
  const { syncs, calls } = controlledSyncs();
  const a = watch(syncs.sync('/pool'));
  assert.equal(calls.length, 1, 'the first caller starts an fsync at once');
  const b = watch(syncs.sync('/pool'));
  const c = watch(syncs.sync('/pool'));
  const d = watch(syncs.sync('/pool'));
  await settle();
  assert.equal(calls.length, 1, 'no second fsync while the first runs: it may have begun before their changes');
  calls[0]?.finish();
  await settle();
  assert.equal(a.state, 'ok');
  assert.deepEqual([b.state, c.state, d.state], ['pending', 'pending', 'pending'], 'the first fsync proves nothing for callers who came after it began');
  assert.equal(calls.length, 2, 'exactly one more fsync serves all three');
  const e = watch(syncs.sync('/pool'));
  calls[1]?.finish();
  await settle();
  assert.deepEqual([b.state, c.state, d.state], ['ok', 'ok', 'ok']);
  assert.equal(e.state, 'pending', 'a caller who came during the shared fsync waits for the one after it');
  assert.equal(calls.length, 3);
  calls[2]?.finish();
  await settle();
  assert.equal(e.state, 'ok');
  assert.equal(syncs.running, 0, 'nothing left in flight');
  const f = watch(syncs.sync('/pool'));
  assert.equal(calls.length, 4, 'once idle, a caller starts its own fsync at once again');
  calls[3]?.finish();
  await settle();
  assert.equal(f.state, 'ok');
});

test('directories do not wait for one another', async () => {
  const { syncs, calls } = controlledSyncs();
  const a = watch(syncs.sync('/one'));
  const b = watch(syncs.sync('/two'));
  assert.deepEqual(calls.map((x) => x.dir), ['/one', '/two']);
  calls[1]?.finish();
  await settle();
  assert.deepEqual([a.state, b.state], ['pending', 'ok']);
  calls[0]?.finish();
  await settle();
  assert.equal(a.state, 'ok');
});

test('a failed fsync rejects everyone who shared it, and not those waiting for the next one', async () => {
  const { syncs, calls } = controlledSyncs();
  const a = watch(syncs.sync('/pool'));
  const b = watch(syncs.sync('/pool'));
  const c = watch(syncs.sync('/pool'));
  calls[0]?.fail(new Error('EIO on the first'));
  await settle();
  assert.equal(a.state, 'failed');
  assert.deepEqual([b.state, c.state], ['pending', 'pending'], 'the waiters get an fsync of their own after a failed one');
  assert.equal(calls.length, 2);
  calls[1]?.fail(new Error('EIO on the shared one'));
  await settle();
  assert.deepEqual([b.state, c.state], ['failed', 'failed']);
  assert.equal(b.error?.message, 'EIO on the shared one');
  assert.equal(syncs.running, 0);
});

test('concurrent atomic writes in one real directory all land whole, each durable call resolved', async () => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lode-dirsync-'));
  try {
    await Promise.all(Array.from({ length: 32 }, (_, i) => writeFileAtomic(path.join(dir, `r${i}.json`), JSON.stringify({ i }))));
    await Promise.all([syncDirectory(dir), syncDirectory(dir + '/'), syncDirectory(dir)]);
    const names = (await fs.readdir(dir)).sort();
    assert.equal(names.length, 32, `no temp files left: ${names.join(' ')}`);
    for (let i = 0; i < 32; i++) assert.deepEqual(JSON.parse(await fs.readFile(path.join(dir, `r${i}.json`), 'utf8')), { i });
    await assert.rejects(syncDirectory(path.join(dir, 'missing')), { code: 'ENOENT' });
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
});
