// Copies for snapshots and clones: a reflink made by FICLONE (no process) shares the source's blocks where the filesystem can, is refused where it cannot, and the probe tells the two apart; the sparse copy keeps holes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { promises as fs, statfsSync } from 'node:fs';
import * as path from 'node:path';
import { toolRunCount } from '../../src/sys/exec.js';
import { allocatedBytes, copyFile, reflinkSupported } from '../../src/sys/file-copy.js';
import { scratchFilesystem } from '../backends/dir-scenarios.js';
import { smallFilesystem } from '../helpers/small-filesystem.js';

const MiB = 1024 * 1024;

const usedBytes = (dir: string): number => {
  const s = statfsSync(dir);
  return (s.blocks - s.bfree) * s.bsize;
};

test('on XFS with reflink a copy shares the blocks of its source, with no process started, and says so in the probe', async (t) => {
  // mkfs.xfs refuses filesystems under 300 MB (the image is sparse) and makes reflink ones by default.
  const dir = await scratchFilesystem(t, 512, ['mkfs.xfs', '-q']);
  assert.equal(await reflinkSupported(dir), true);
  assert.deepEqual((await fs.readdir(dir)).filter((n) => n.startsWith('.lode-reflink-probe')), [], 'the probe leaves nothing');
  const source = path.join(dir, 'source.img');
  const data = randomBytes(16 * MiB);
  await fs.writeFile(source, data);
  const copy = path.join(dir, 'copy.img');
  await fs.writeFile(copy, 'left by a crashed attempt');
  const used = usedBytes(dir);
  const before = toolRunCount();
  await copyFile(source, copy, 'reflink');
  assert.equal(toolRunCount() - before, 0, 'FICLONE, not cp');
  assert.ok((await fs.readFile(copy)).equals(data), 'the same bytes');
  assert.ok(usedBytes(dir) - used < 2 * MiB, `shared, not copied: ${usedBytes(dir) - used} bytes more in use`);
});

test('where the filesystem cannot clone (tmpfs), the probe says no and a reflink is refused with nothing left; the sparse copy keeps holes', async (t) => {
  const dir = await smallFilesystem(t, '64m', 'lode-file-copy-');
  assert.equal(await reflinkSupported(dir), false);
  assert.deepEqual(await fs.readdir(dir), [], 'the probe leaves nothing');
  const source = path.join(dir, 'source.img');
  const fh = await fs.open(source, 'w');
  await fh.write(Buffer.alloc(MiB, 1), 0, MiB, 0);
  await fh.truncate(16 * MiB);
  await fh.close();
  await assert.rejects(copyFile(source, path.join(dir, 'clone.img'), 'reflink'), (err: NodeJS.ErrnoException) => typeof err.code === 'string');
  await assert.rejects(fs.stat(path.join(dir, 'clone.img')), { code: 'ENOENT' });
  const copy = path.join(dir, 'copy.img');
  await copyFile(source, copy, 'copy');
  assert.equal((await fs.stat(copy)).size, 16 * MiB);
  assert.ok(await allocatedBytes(copy) <= 2 * MiB, 'the zeros stay holes');
});
