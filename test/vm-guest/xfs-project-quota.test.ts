// XFS project quotas in the VM's Debian kernel: what a `dir` backend on XFS relies on to hold a volume
// directory to its size.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, stat } from 'node:fs/promises';
import { writeUpTo } from '../conformance/checks.js';
import * as path from 'node:path';
import { guestOnly, MiB, scratchLoop, scratchMount, sh } from './support.js';


test('XFS mounted prjquota: a project limited to 32 MiB stops a 64 MiB write at 32 MiB; the rest of the filesystem is not limited', { skip: guestOnly }, async (t) => {
  // mkfs.xfs refuses filesystems under 300 MB; the image is sparse, so this costs only what is written.
  const device = await scratchLoop(t, 512);
  await sh('mkfs.xfs', ['-q', device]);
  const mnt = await scratchMount(t, device, 'xfs', ['prjquota']);
  const vol = path.join(mnt, 'vol-42');
  await mkdir(vol);
  await sh('xfs_quota', ['-x', '-c', `project -s -p ${vol} 42`, '-c', 'limit -p bhard=32m 42', mnt]);

  const inside = await writeUpTo(path.join(vol, 'data'), 64 * MiB);
  assert.ok(inside.code === 'EDQUOT' || inside.code === 'ENOSPC', `the write past the limit must fail with EDQUOT or ENOSPC, got ${inside.code}`);
  assert.ok(inside.written <= 32 * MiB && inside.written >= 31 * MiB, `stopped at ${inside.written} bytes, expected about 32 MiB`);
  assert.ok((await stat(path.join(vol, 'data'))).size <= 32 * MiB);

  const report = await sh('xfs_quota', ['-x', '-c', 'report -p -b -N', mnt]);
  assert.match(report, /^#42\s+32768\s+0\s+32768\b/m, `project 42 must be at its 32 MiB hard limit:\n${report}`);

  const outside = await writeUpTo(path.join(mnt, 'elsewhere'), 64 * MiB);
  assert.equal(outside.code, undefined, 'a directory outside the project is not held to its limit');
  assert.equal(outside.written, 64 * MiB);
});
