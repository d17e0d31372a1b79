// detachLoop: a device someone else still holds open is only marked by the kernel to be cleared at its last close; the detach waits for that, bounded, so its caller's "gone" is true.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { attachNewLoop, backingFileOf, detachLoop, detachPending } from '../../src/sys/loop.js';
import { untilAsync } from '../helpers/until.js';

async function attachedImage(t: { after: (fn: () => Promise<void>) => void }): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lode-detach-'));
  const image = path.join(dir, 'vol.img');
  await fs.writeFile(image, Buffer.alloc(4 * 1024 * 1024));
  const { device } = await attachNewLoop(image, false, false);
  t.after(async () => {
    if ((await backingFileOf(device)) !== undefined) await detachLoop(device, 0).catch(() => undefined);
    await fs.rm(dir, { recursive: true, force: true });
  });
  return device;
}

test('a detach waits while another process still holds the device open, and returns once the kernel has let it go', async (t) => {
  const device = await attachedImage(t);
  const holder = await fs.open(device, 'r');
  let closed = false;
  const detached = detachLoop(device).then(() => closed);
  await new Promise((r) => setTimeout(r, 300));
  assert.notEqual(await backingFileOf(device), undefined, 'held open: the kernel keeps the device attached');
  closed = true;
  await holder.close();
  assert.equal(await detached, true, 'the detach returned only after the holder let go');
  assert.equal(await backingFileOf(device), undefined, 'and the device is gone when it returns');
});

test('a device held longer than the bound: the detach returns (no hang), and the kernel clears it once the holder lets go', async (t) => {
  const device = await attachedImage(t);
  assert.equal(await detachPending(device), false, 'an attach leaves no mark to clear');
  const holder = await fs.open(device, 'r');
  await detachLoop(device, 100);
  assert.notEqual(await backingFileOf(device), undefined, 'still held: not detached yet');
  assert.equal(await detachPending(device), true, 'but marked to be cleared at its last close');
  await holder.close();
  // Not a speed check: the bound only turns a device the kernel never clears into a failure.
  await untilAsync('the kernel clears the device at its last close', async () => (await backingFileOf(device)) === undefined, 5000);
});
