// Preallocation, by the tool helper's system call and (this file again with LODE_TOOL_HELPER=off) with fallocate(1): several files at once, a missing file never made, a link never followed, one that does not fit failing alone, a filesystem without fallocate named as such.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, promises as fs, rmSync, statSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { run, toolRunCount } from '../../src/sys/exec.js';
import { isPreallocated, preallocateFile, preallocateFiles, PreallocationUnsupported } from '../../src/sys/preallocate.js';
import { smallFilesystem } from '../helpers/small-filesystem.js';
import { passesWithToolsStartedDirectly, toolsStartDirectly } from '../helpers/tools-off-run.js';

const MiB = 1024 * 1024;
const direct = toolsStartDirectly;
const how = direct ? 'with fallocate(1)' : 'by the tool helper';

test(`several files are preallocated in full at once (${how}); a missing file is not made and a link is not followed`, async (t) => {
  const dir = await smallFilesystem(t, '64m', 'lode-prealloc-');
  const files = ['a', 'b', 'c'].map((n) => path.join(dir, n));
  for (const f of files) await fs.writeFile(f, '');
  const target = path.join(dir, 'target');
  await fs.writeFile(target, '');
  await fs.symlink(target, path.join(dir, 'link'));
  const before = toolRunCount();
  const done = await preallocateFiles([
    { file: files[0]!, bytes: 4 * MiB },
    { file: path.join(dir, 'missing'), bytes: 4 * MiB },
    { file: files[1]!, bytes: 8 * MiB },
    { file: path.join(dir, 'link'), bytes: 4 * MiB },
    { file: files[2]!, bytes: 2 * MiB },
  ]);
  assert.equal(toolRunCount() - before, direct ? 1 : 0, direct ? 'one tool start for every file' : 'no process at all');
  // The helper answers for each file; the shell's run is known done for none (each is checked).
  assert.deepEqual(done, direct ? [false, false, false, false, false] : [true, false, true, false, true]);
  assert.equal(await isPreallocated(files[0]!, 4 * MiB), true);
  assert.equal(await isPreallocated(files[1]!, 8 * MiB), true);
  assert.equal(await isPreallocated(files[2]!, 2 * MiB), true);
  assert.equal((await fs.stat(files[1]!)).size, 8 * MiB, 'extended to its size, as fallocate --length does');
  await assert.rejects(fs.stat(path.join(dir, 'missing')), { code: 'ENOENT' }, 'a file that is not there is not created');
  assert.equal((await fs.stat(target)).size, 0, 'nothing is written through a link');
});

test(`a file that does not fit falls short and says so through isPreallocated; the files after it are still done; alone it gives its own error (${how})`, async (t) => {
  const dir = await smallFilesystem(t, '64m', 'lode-prealloc-');
  const big = path.join(dir, 'big');
  const small = path.join(dir, 'small');
  await fs.writeFile(big, '');
  await fs.writeFile(small, '');
  assert.deepEqual(await preallocateFiles([{ file: big, bytes: 128 * MiB }, { file: small, bytes: 4 * MiB }]), direct ? [false, false] : [false, true]);
  assert.equal(await isPreallocated(big, 128 * MiB), false);
  assert.equal(await isPreallocated(small, 4 * MiB), true);
  // ENOSPC is what the driver's error mapping turns into RESOURCE_EXHAUSTED (its own tests show that).
  await assert.rejects(preallocateFile(big, 128 * MiB), direct ? /No space left on device/ : { code: 'ENOSPC', message: /No space left on device/ });
  assert.equal(await isPreallocated(path.join(dir, 'none'), 1), false, 'a missing file is not preallocated');
});

test(`a filesystem that cannot preallocate (ramfs) is named as such, not as a failure (${how})`, async (t) => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lode-prealloc-ramfs-'));
  await run('mount', ['-t', 'ramfs', 'ramfs', dir]);
  t.after(async () => {
    await run('umount', [dir]);
    await fs.rm(dir, { recursive: true, force: true });
  });
  const file = path.join(dir, 'image');
  await fs.writeFile(file, '');
  await assert.rejects(preallocateFile(file, MiB), PreallocationUnsupported);
});

if (!direct) {
  test('the helper never creates a file, follows a final link or preallocates anything but a regular file', async (t) => {
    const dir = await smallFilesystem(t, '16m', 'lode-prealloc-');
    await assert.rejects(preallocateFile(path.join(dir, 'missing'), MiB), { code: 'ENOENT' });
    await assert.rejects(fs.stat(path.join(dir, 'missing')), { code: 'ENOENT' });
    const target = path.join(dir, 'target');
    await fs.writeFile(target, '');
    await fs.symlink(target, path.join(dir, 'link'));
    await assert.rejects(preallocateFile(path.join(dir, 'link'), MiB), { code: 'ELOOP' });
    assert.equal((await fs.stat(target)).size, 0);
    await assert.rejects(preallocateFile('/dev/null', MiB), { code: 'EINVAL' });
    await assert.rejects(preallocateFile(dir, MiB), { code: 'EISDIR' });
  });

  test('where the helper cannot run, preallocation falls back to fallocate(1)', async () => {
    const dir = mkdtempSync('/tmp/lode-prealloc-');
    try {
      // A perl that fails at once, as a broken one or a refused prctl would.
      writeFileSync(path.join(dir, 'perl'), '#!/bin/sh\nexit 70\n');
      chmodSync(path.join(dir, 'perl'), 0o755);
      const file = path.join(dir, 'image');
      writeFileSync(file, '');
      const module = new URL('../../src/sys/preallocate.js', import.meta.url).href;
      const script = `import { preallocateFile } from ${JSON.stringify(module)};
        await preallocateFile(${JSON.stringify(file)}, ${MiB});`;
      const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
        stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, PATH: `${dir}:${process.env.PATH ?? ''}` },
      });
      let err = '';
      child.stderr.setEncoding('utf8').on('data', (c: string) => { err += c; });
      const code = await new Promise<number | null>((r) => child.on('close', (c) => r(c)));
      assert.equal(code, 0, err);
      assert.match(err, /before it ran: system tools are started by forking the driver instead/);
      assert.equal(statSync(file).size, MiB);
      assert.ok(statSync(file).blocks * 512 >= MiB, 'every block reserved');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('the same cases pass where tools start directly (LODE_TOOL_HELPER=off)', async () => {
    await passesWithToolsStartedDirectly(import.meta.url, 3);
  });
}
