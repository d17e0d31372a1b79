// Mounts and unmounts, by the tool helper's system calls and (this file again with LODE_TOOL_HELPER=off) with mount(8) and umount(8): the flags asked for, a handle reference resolved, binds, and a refused mount left to mount(8) and its exit status.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, promises as fs, openSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { callThroughHelper, ExecError, run, SystemCallError, toolRunCount } from '../../src/sys/exec.js';
import { mountFlags, remountAttributes } from '../../src/sys/mount-flags.js';
import { bindMount, findMount, mountDevice, readMountTable, unmountIfMounted, unmountRef } from '../../src/sys/mounts.js';
import { passesWithToolsStartedDirectly, toolsStartDirectly } from '../helpers/tools-off-run.js';

const direct = toolsStartDirectly;
const how = direct ? 'with mount(8) and umount(8)' : 'by the tool helper';
/** Tool starts a step takes: none through the helper, one where tools start directly. */
const one = direct ? 1 : 0;

type Hooks = { after: (fn: () => Promise<void>) => void };

/**
 * A scratch directory; after the test, whatever is mounted beneath it (a failed assertion leaves
 * mounts behind) is unmounted, deepest first, then `more` runs and the directory is removed.
 */
async function scratch(t: Hooks, more: () => Promise<void> = async () => {}): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lode-mounts-'));
  t.after(async () => {
    for (const m of (await readMountTable()).filter((e) => e.mountPoint.startsWith(`${dir}/`)).reverse()) await run('umount', [m.mountPoint]);
    await more();
    await fs.rm(dir, { recursive: true, force: true });
  });
  return dir;
}

/** An ext4 image on a loop device (detached after the test), and a directory for its mounts. */
async function ext4Device(t: Hooks): Promise<{ dir: string; device: string }> {
  let device = '';
  const dir = await scratch(t, async () => {
    if (device) await run('losetup', ['--detach', device]);
  });
  const image = path.join(dir, 'image');
  await run('truncate', ['-s', '32M', image]);
  await run('mkfs.ext4', ['-F', '-q', image]);
  device = (await run('losetup', ['--find', '--show', image])).stdout.trim();
  const mounts = path.join(dir, 'mounts');
  await fs.mkdir(mounts);
  return { dir: mounts, device };
}

test('mount options become flags in order, the last of two contrary ones winning; any other option is not one', () => {
  assert.equal(mountFlags([]), 0);
  assert.equal(mountFlags(['rw', 'ro']), 0x1);
  assert.equal(mountFlags(['ro', 'rw']), 0);
  assert.equal(mountFlags(['rw', 'noatime', 'nodev', 'nosuid', 'noexec']), 0x400 | 0x4 | 0x2 | 0x8);
  assert.equal(mountFlags(['noatime', 'atime']), 0);
  assert.equal(mountFlags(['rw', 'discard']), undefined, "a filesystem's own option");
  assert.equal(mountFlags(['defaults']), undefined, 'an option only mount(8) reads');
  assert.equal(mountFlags(['nouuid']), undefined);
});

test('remount options become attributes to set and to clear, the last of two contrary ones winning; atime options are not among them', () => {
  assert.deepEqual(remountAttributes(['ro']), { set: 0x1, clear: 0 });
  assert.deepEqual(remountAttributes(['ro', 'rw']), { set: 0, clear: 0x1 });
  assert.deepEqual(remountAttributes(['rw', 'nosuid', 'dev', 'ro']), { set: 0x1 | 0x2, clear: 0x4 });
  assert.equal(remountAttributes(['noatime', 'ro']), undefined);
  assert.equal(remountAttributes(['ro', 'discard']), undefined);
});

test(`a filesystem is mounted with the flags asked for, through a handle reference, and unmounted (${how})`, async (t) => {
  const { dir, device } = await ext4Device(t);
  const target = path.join(dir, 'staging');
  await fs.mkdir(target);
  // The driver names targets as its own open handles (sys/beneath.ts), which the helper must follow.
  const handle = openSync(dir, 'r');
  t.after(() => closeSync(handle));
  const ref = `/proc/${process.pid}/fd/${handle}/staging`;
  let before = toolRunCount();
  await mountDevice(device, ref, 'ext4', ['rw', 'noatime', 'nodev', 'nosuid']);
  assert.equal(toolRunCount() - before, one);
  const m = await findMount(target);
  assert.ok(m, 'mounted at the path the handle names');
  assert.equal(m.fsType, 'ext4');
  assert.equal(m.source, device);
  for (const o of ['rw', 'noatime', 'nodev', 'nosuid']) assert.ok(m.options.includes(o), `${o} in ${m.options.join(',')}`);
  before = toolRunCount();
  assert.equal(await unmountIfMounted(target), true);
  assert.equal(toolRunCount() - before, one);
  assert.equal(await findMount(target), undefined);

  await mountDevice(device, target, 'ext4', ['rw', 'ro']);
  assert.ok((await findMount(target))?.options.includes('ro'), 'the last of rw and ro wins');
  await unmountRef(ref);
  assert.equal(await findMount(target), undefined);
});

test(`an option that is not a flag is left to mount(8), which gives the filesystem its own options (${how})`, async (t) => {
  const { dir, device } = await ext4Device(t);
  const target = path.join(dir, 'staging');
  await fs.mkdir(target);
  const before = toolRunCount();
  await mountDevice(device, target, 'ext4', ['rw', 'discard']);
  assert.equal(toolRunCount() - before, 1);
  assert.equal((await findMount(target))?.fsType, 'ext4');
  await unmountRef(target);
});

test(`a mount the kernel refuses fails as mount(8) fails, exit status 32, and leaves nothing mounted (${how})`, async (t) => {
  const { dir, device } = await ext4Device(t);
  const target = path.join(dir, 'staging');
  await fs.mkdir(target);
  const before = toolRunCount();
  await assert.rejects(mountDevice(device, target, 'xfs', ['rw']), (err: unknown) => err instanceof ExecError && err.command === 'mount' && err.exitCode === 32);
  assert.equal(toolRunCount() - before, 1, "mount(8)'s attempt, after the helper's where there is one");
  assert.equal(await findMount(target), undefined);
  await assert.rejects(unmountRef(target), (err: unknown) => err instanceof ExecError && err.command === 'umount' && /not mounted/.test(err.stderr));
});

test(`a directory is bound without options, read-only through a remount that keeps the flags the bind took from its source (${how})`, async (t) => {
  const dir = await scratch(t);
  const source = path.join(dir, 'source');
  const rw = path.join(dir, 'rw');
  const ro = path.join(dir, 'ro');
  const other = path.join(dir, 'other');
  for (const d of [source, rw, ro, other]) await fs.mkdir(d);
  // A source mount with flags of its own, which a bind copies and a remount must keep.
  await run('mount', ['-t', 'tmpfs', '-o', 'size=1m,nosuid,nodev,noatime', 'tmpfs', source]);
  await fs.writeFile(path.join(source, 'file'), 'data');
  let before = toolRunCount();
  await bindMount(source, rw, rw);
  assert.equal(toolRunCount() - before, one);
  assert.equal(await fs.readFile(path.join(rw, 'file'), 'utf8'), 'data');
  before = toolRunCount();
  await bindMount(source, ro, ro, ['ro']);
  assert.equal(toolRunCount() - before, 2 * one, 'the bind and its remount');
  const m = await findMount(ro);
  for (const o of ['ro', 'nosuid', 'nodev', 'noatime']) assert.ok(m?.options.includes(o), `${o} in ${m?.options.join(',')}`);
  await assert.rejects(fs.writeFile(path.join(ro, 'new'), 'x'), { code: 'EROFS' });
  // An atime option is not an attribute the helper sets: that remount is mount(8)'s.
  before = toolRunCount();
  await bindMount(source, other, other, ['noexec', 'relatime', 'ro']);
  assert.equal(toolRunCount() - before, one + 1);
  const o = await findMount(other);
  for (const f of ['ro', 'noexec', 'nosuid']) assert.ok(o?.options.includes(f), `${f} in ${o?.options.join(',')}`);
  before = toolRunCount();
  for (const d of [rw, ro, other]) await unmountRef(d);
  assert.equal(toolRunCount() - before, 3 * one);
  for (const d of [rw, ro, other]) assert.equal(await findMount(d), undefined);
});

if (!direct) {
  test('the helper refuses a path with a NUL in it, or an empty one, as EINVAL', async () => {
    await assert.rejects(callThroughHelper({ name: 'umount2', target: '/tmp\0/x', flags: 0 }), (err: unknown) => err instanceof SystemCallError && err.code === 'EINVAL');
    await assert.rejects(callThroughHelper({ name: 'umount2', target: '', flags: 0 }), (err: unknown) => err instanceof SystemCallError && err.code === 'EINVAL');
    await assert.rejects(callThroughHelper({ name: 'mount', source: 'tmpfs', target: '', fsType: 'tmpfs', flags: 0, data: '' }), (err: unknown) => err instanceof SystemCallError && err.code === 'EINVAL');
  });

  test('the same cases pass where tools start directly (LODE_TOOL_HELPER=off)', async () => {
    await passesWithToolsStartedDirectly(import.meta.url, 6);
  });
}
