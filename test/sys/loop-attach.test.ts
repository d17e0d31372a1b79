// Loop devices attached and detached by the tool helper's ioctls and (this file again with LODE_TOOL_HELPER=off) by losetup: a free device each time, read-only and direct I/O as asked, the image's path in sysfs, and a refused attach left to losetup and its message.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs, readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { callThroughHelper, ExecError, run, SystemCallError, toolRunCount } from '../../src/sys/exec.js';
import { attachNewLoop, backingFileOf, describeLoop, detachLoop, listLoopDevices } from '../../src/sys/loop.js';
import { passesWithToolsStartedDirectly, toolsStartDirectly } from '../helpers/tools-off-run.js';

const direct = toolsStartDirectly;
const how = direct ? 'by losetup' : 'by the tool helper';
/** Tool starts a step takes: none through the helper, one where tools start directly. */
const one = direct ? 1 : 0;

/** A directory with two 4 MiB images; what a failed assertion left attached is detached after the test. */
async function images(t: { after: (fn: () => Promise<void>) => void }): Promise<{ dir: string; a: string; b: string; attached: string[] }> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lode-loop-attach-'));
  const attached: string[] = [];
  t.after(async () => {
    for (const d of attached) if ((await backingFileOf(d)) !== undefined) await detachLoop(d, 0).catch(() => undefined);
    await fs.rm(dir, { recursive: true, force: true });
  });
  const a = path.join(dir, 'a.img');
  const b = path.join(dir, 'b.img');
  for (const f of [a, b]) await fs.writeFile(f, Buffer.alloc(4 * 1024 * 1024));
  return { dir, a, b, attached };
}

const sysfs = (device: string, file: string): string => readFileSync(`/sys/block/${path.basename(device)}/${file}`, 'utf8').trim();

test(`each attach takes a free device of its own, writable or read-only as asked, and a detach lets it go (${how})`, async (t) => {
  const { a, b, attached } = await images(t);
  let before = toolRunCount();
  const first = await attachNewLoop(a, false, false);
  attached.push(first.device);
  const second = await attachNewLoop(a, true, false);
  attached.push(second.device);
  const third = await attachNewLoop(b, false, false);
  attached.push(third.device);
  assert.equal(toolRunCount() - before, 3 * one);
  assert.equal(new Set([first.device, second.device, third.device]).size, 3, 'three devices');
  assert.deepEqual(await describeLoop(first.device), { device: first.device, backingFile: a, readOnly: false });
  assert.deepEqual(await describeLoop(second.device), { device: second.device, backingFile: a, readOnly: true });
  assert.equal((await describeLoop(third.device))?.backingFile, b);
  assert.equal(sysfs(first.device, 'loop/autoclear'), '0', 'never cleared behind the driver\'s back');
  assert.equal(sysfs(first.device, 'loop/partscan'), '0');
  assert.equal(first.directIo, false);
  assert.equal(sysfs(first.device, 'size'), String((4 * 1024 * 1024) / 512), 'the whole image');
  // Writes through the writable device reach the image; the read-only one refuses them.
  const fh = await fs.open(first.device, 'r+');
  await fh.write(Buffer.from('through the device'), 0, 18, 4096);
  await fh.sync();
  await fh.close();
  assert.equal(readFileSync(a).subarray(4096, 4096 + 18).toString(), 'through the device');
  const ro = await fs.open(second.device, 'r+');
  await assert.rejects(ro.write(Buffer.alloc(4096), 0, 4096, 0), { code: 'EPERM' });
  await ro.close();
  before = toolRunCount();
  for (const d of [first.device, second.device, third.device]) await detachLoop(d);
  assert.equal(toolRunCount() - before, 3 * one);
  for (const d of [first.device, second.device, third.device]) assert.equal(await backingFileOf(d), undefined);
});

test(`direct I/O is asked for and reported as the kernel set it (${how})`, async (t) => {
  const { a, attached } = await images(t);
  const { device, directIo } = await attachNewLoop(a, false, true);
  attached.push(device);
  // The test's images lie in the machine's temporary directory, whose filesystem may or may not do
  // O_DIRECT: what counts is that the answer is sysfs's, and that the device was made either way.
  assert.equal(directIo, sysfs(device, 'loop/dio') === '1');
  assert.equal(await backingFileOf(device), a);
  // What losetup gets for the same image, side by side: the helper's attach must not fall short of it.
  const byLosetup = (await run('losetup', ['--find', '--show', '--direct-io=on', a])).stdout.trim();
  attached.push(byLosetup);
  assert.equal(sysfs(device, 'loop/dio'), sysfs(byLosetup, 'loop/dio'));
  await detachLoop(device);
  await detachLoop(byLosetup);
});

test(`an attach of what is not a regular file fails as losetup fails, and attaches nothing (${how})`, async (t) => {
  const { dir } = await images(t);
  const before = toolRunCount();
  await assert.rejects(attachNewLoop(path.join(dir, 'missing.img'), false, false), (err: unknown) => err instanceof ExecError && err.command === 'losetup');
  await assert.rejects(attachNewLoop(dir, false, false), (err: unknown) => err instanceof ExecError && err.command === 'losetup');
  assert.equal(toolRunCount() - before, 2, "losetup's attempts, after the helper's where there is one");
  assert.deepEqual((await listLoopDevices()).filter((d) => d.backingFile.startsWith(dir)), [], 'no device attached');
});

if (!direct) {
  test('the helper refuses a detach of anything but a loop device, and a link in the image\'s place', async (t) => {
    const { dir, a } = await images(t);
    for (const device of ['/dev/null', '/dev/loop', '/dev/loop1/../sda', 'loop1']) {
      await assert.rejects(callThroughHelper({ name: 'loop_detach', device }), (err: unknown) => err instanceof SystemCallError && err.code === 'EINVAL', device);
    }
    await fs.symlink(a, path.join(dir, 'link.img'));
    await assert.rejects(callThroughHelper({ name: 'loop_attach', file: path.join(dir, 'link.img'), readOnly: false, directIo: false }), (err: unknown) => err instanceof SystemCallError && err.code === 'ELOOP');
    await assert.rejects(callThroughHelper({ name: 'loop_attach', file: dir, readOnly: true, directIo: false }), (err: unknown) => err instanceof SystemCallError && err.code === 'EINVAL');
  });

  test('the same cases pass where tools start directly (LODE_TOOL_HELPER=off)', async () => {
    await passesWithToolsStartedDirectly(import.meta.url, 3);
  });
}
