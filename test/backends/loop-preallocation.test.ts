// Loop images created together share one preallocation run: fewer tool starts than images, every image holding all its blocks, and an image the shared run could not fit failing alone with the tool's own error while the others are made.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { LoopBackend } from '../../src/backends/loop/loop-backend.js';
import type { PoolConfig } from '../../src/pool/pool.js';
import { toolRunCount } from '../../src/sys/exec.js';
import { isPreallocated } from '../../src/sys/preallocate.js';
import { smallFilesystem } from '../helpers/small-filesystem.js';
import { MiB, record } from './dir-scenarios.js';

/** A loop pool on a 96 MiB tmpfs of its own; its configured size is larger, so only the filesystem can refuse an image. */
async function poolOnSmallFilesystem(t: { after: (fn: () => Promise<void>) => void }): Promise<LoopBackend> {
  const root = await smallFilesystem(t, '96m', 'lode-loop-prealloc-');
  const config: PoolConfig = { name: 'quota-pool', backend: 'loop', dir: path.join(root, 'pool'), sizeBytes: 1024 * MiB, defaultVolumeBytes: 4 * MiB, directIo: false };
  await fs.mkdir(config.dir, { recursive: true });
  const b = new LoopBackend(config);
  await b.open([]);
  return b;
}

test('sixteen images allocated at once take fewer tool starts than images, and each holds all its blocks', async (t) => {
  const b = await poolOnSmallFilesystem(t);
  const records = Array.from({ length: 16 }, () => record(4 * MiB));
  const before = toolRunCount();
  await Promise.all(records.map((r) => b.allocate(r)));
  const started = toolRunCount() - before;
  t.diagnostic(`16 images, ${started} tool starts`);
  assert.ok(started < 16, `${started} tool starts for 16 images: the ones that arrived together did not share a run`);
  for (const r of records) assert.equal(await isPreallocated(b.imagePath(r), 4 * MiB), true, `${r.id} holds all its blocks`);
});

test('an image too large for the filesystem, allocated among others, fails alone with the tool\'s error; the others are made', async (t) => {
  const b = await poolOnSmallFilesystem(t);
  const small = Array.from({ length: 6 }, () => record(4 * MiB));
  const big = record(200 * MiB);
  // The first runs alone; the rest, big among them, arrive while it runs and share the next run.
  const all = [small[0]!, small[1]!, big, ...small.slice(2)];
  const results = await Promise.allSettled(all.map((r) => b.allocate(r)));
  for (const [i, r] of all.entries()) {
    const res = results[i]!;
    if (r === big) {
      assert.equal(res.status, 'rejected');
      assert.match(String((res as PromiseRejectedResult).reason), /No space left on device/, 'the tool\'s own error, from running alone');
    } else {
      assert.equal(res.status, 'fulfilled', `${r.id}: ${String((res as PromiseRejectedResult).reason)}`);
      assert.equal(await isPreallocated(b.imagePath(r), 4 * MiB), true, `${r.id} holds all its blocks`);
    }
  }
});
