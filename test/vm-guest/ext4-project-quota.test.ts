// ext4 project quotas in the VM's Debian kernel: they enforce, but only against writers without
// CAP_SYS_RESOURCE, which the kernel lets exceed any hard limit of the VFS quota formats.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, stat } from 'node:fs/promises';
import * as path from 'node:path';
import { guestOnly, MiB, run, scratchDir, scratchLoop, scratchMount, sh } from './support.js';

const PROJECT = 42;

/** An ext4 filesystem with the project quota feature, mounted prjquota, with one directory limited to 32 MiB. */
async function limitedDir(t: TestContext): Promise<{ mnt: string; dir: string }> {
  const device = await scratchLoop(t, 256);
  // Project ids live in the inode's extra space: small filesystems default to 128-byte inodes, too small.
  await sh('mkfs.ext4', ['-q', '-O', 'quota,project', '-I', '256', device]);
  const mnt = await scratchMount(t, device, 'ext4', ['prjquota']);
  const dir = path.join(mnt, `vol-${PROJECT}`);
  await mkdir(dir);
  await sh('chattr', ['+P', '-p', String(PROJECT), dir]);
  await sh('setquota', ['-P', String(PROJECT), '0', String(32 * 1024), '0', '0', mnt]);
  return { mnt, dir };
}

// dd writes 64 MiB in 1 MiB blocks and fsyncs, so a limit shows up as a failed write or fsync.
const ddArgs = (file: string): string[] => ['if=/dev/zero', `of=${file}`, 'bs=1M', 'count=64', 'conv=fsync'];

test('ext4 quota,project mounted prjquota: a writer without CAP_SYS_RESOURCE stops at the 32 MiB project limit with EDQUOT', { skip: guestOnly }, async (t) => {
  const { mnt, dir } = await limitedDir(t);
  // quotaon -p answers in its exit code as well (non-zero when on); the text is what says which.
  assert.match((await run('quotaon', ['-Ppv', mnt])).stdout, /project quota on .* is on \(enforced\)/);
  const file = path.join(dir, 'data');
  // What a container without CAP_SYS_RESOURCE is: root, but no longer allowed past limits.
  const r = await run('setpriv', ['--inh-caps=-sys_resource', '--bounding-set=-sys_resource', 'dd', ...ddArgs(file)]);
  assert.notEqual(r.code, 0, 'the 64 MiB write must fail');
  assert.match(r.stderr, /Disk quota exceeded/);
  const size = (await stat(file)).size;
  assert.ok(size <= 32 * MiB && size >= 31 * MiB, `stopped at ${size} bytes, expected about 32 MiB`);
});

test('ext4 project limits do not stop a writer that holds CAP_SYS_RESOURCE: it passes the hard limit', { skip: guestOnly }, async (t) => {
  const { mnt, dir } = await limitedDir(t);
  const file = path.join(dir, 'data');
  const r = await run('dd', ddArgs(file));
  assert.equal(r.code, 0, r.stderr);
  assert.equal((await stat(file)).size, 64 * MiB);
  // The usage is still accounted, above the limit: the quota is on, the writer is simply exempt.
  const report = await sh('repquota', ['-P', '-n', mnt]);
  const used = new RegExp(`^#${PROJECT}\\s+\\+-\\s+(\\d+)\\s+0\\s+32768\\b`, 'm').exec(report)?.[1];
  assert.ok(used !== undefined && Number(used) >= 64 * 1024, `project ${PROJECT} must be over its 32 MiB hard limit by the 64 MiB written:\n${report}`);
});

test('ext4 without the project feature refuses a prjquota mount, so a pool on it can be told apart at start-up', { skip: guestOnly }, async (t) => {
  const device = await scratchLoop(t, 256);
  await sh('mkfs.ext4', ['-q', '-I', '256', device]);
  const mnt = await scratchDir(t, 'mnt');
  const r = await run('mount', ['-t', 'ext4', '-o', 'prjquota', device, mnt]);
  if (r.code === 0) await sh('umount', [mnt]);
  assert.notEqual(r.code, 0, 'prjquota must not mount without the project feature');
  assert.match(await sh('dmesg', []), /Project quota feature not enabled/);
});
