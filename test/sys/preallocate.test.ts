// preallocateFiles: several files reserved through one tool start; a file that is not there is not created, a link not followed, and one that does not fit falls short without holding up the others.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { toolRunCount } from '../../src/sys/exec.js';
import { isPreallocated, preallocateFile, preallocateFiles } from '../../src/sys/preallocate.js';
import { smallFilesystem } from '../helpers/small-filesystem.js';

const MiB = 1024 * 1024;

test('several files are preallocated in full by one tool start; a missing file is not made and a link is not followed', async (t) => {
  const dir = await smallFilesystem(t, '64m', 'lode-prealloc-');
  const files = ['a', 'b', 'c'].map((n) => path.join(dir, n));
  for (const f of files) await fs.writeFile(f, '');
  const target = path.join(dir, 'target');
  await fs.writeFile(target, '');
  await fs.symlink(target, path.join(dir, 'link'));
  const before = toolRunCount();
  await preallocateFiles([
    { file: files[0]!, bytes: 4 * MiB },
    { file: path.join(dir, 'missing'), bytes: 4 * MiB },
    { file: files[1]!, bytes: 8 * MiB },
    { file: path.join(dir, 'link'), bytes: 4 * MiB },
    { file: files[2]!, bytes: 2 * MiB },
  ]);
  assert.equal(toolRunCount() - before, 1, 'one tool start for every file');
  assert.equal(await isPreallocated(files[0]!, 4 * MiB), true);
  assert.equal(await isPreallocated(files[1]!, 8 * MiB), true);
  assert.equal(await isPreallocated(files[2]!, 2 * MiB), true);
  assert.equal((await fs.stat(files[1]!)).size, 8 * MiB, 'extended to its size, as fallocate --length does');
  await assert.rejects(fs.stat(path.join(dir, 'missing')), { code: 'ENOENT' }, 'a file that is not there is not created');
  assert.equal((await fs.stat(target)).size, 0, 'nothing is written through a link');
});

test('a file that does not fit falls short and says so through isPreallocated; the files after it are still done; alone it gives the tool\'s error', async (t) => {
  const dir = await smallFilesystem(t, '64m', 'lode-prealloc-');
  const big = path.join(dir, 'big');
  const small = path.join(dir, 'small');
  await fs.writeFile(big, '');
  await fs.writeFile(small, '');
  await preallocateFiles([{ file: big, bytes: 128 * MiB }, { file: small, bytes: 4 * MiB }]);
  assert.equal(await isPreallocated(big, 128 * MiB), false);
  assert.equal(await isPreallocated(small, 4 * MiB), true);
  await assert.rejects(preallocateFile(big, 128 * MiB), /No space left on device/);
  assert.equal(await isPreallocated(path.join(dir, 'none'), 1), false, 'a missing file is not preallocated');
});
