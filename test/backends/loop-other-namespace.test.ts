// A loop device attached in a mount namespace that has ended (the driver's previous container): the kernel names its backing file by the path inside that mount, and the driver still knows it for its image.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { backedBy, describeLoop, detachLoop } from '../../src/sys/loop.js';
import { run } from '../../src/sys/exec.js';

test('a loop device attached through a bind mount of an ended mount namespace is backed by its image, and by no other file of that name', { skip: process.getuid?.() !== 0 ? 'needs root (loop devices, mount namespaces)' : false }, async (t) => {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'lode-loop-ns-'));
  t.after(() => fs.rm(root, { recursive: true, force: true }));
  const pool = path.join(root, 'host', 'pools', 'fast');
  const other = path.join(root, 'host', 'elsewhere', 'fast');
  const seen = path.join(root, 'container');
  for (const d of [pool, other, seen]) await fs.mkdir(d, { recursive: true });
  const image = path.join(pool, 'vol.img');
  await fs.writeFile(image, '');
  await fs.truncate(image, 8 * 2 ** 20);
  await fs.writeFile(path.join(other, 'vol.img'), '');
  await fs.truncate(path.join(other, 'vol.img'), 8 * 2 ** 20);

  // As a container does: the pool directory bound at another path in a private mount namespace,
  // the device attached through it, then the namespace gone.
  const device = (await run('unshare', ['--mount', '--propagation', 'private', 'sh', '-c', 'mount --bind "$1" "$2" && losetup --find --show "$2/fast/vol.img"', 'sh', path.dirname(pool), seen])).stdout.trim();
  t.after(() => detachLoop(device));
  const d = await describeLoop(device);
  assert.ok(d, `${device} is attached`);
  // What the kernel says now: the path below the bind mount's root, not a path on this host.
  assert.equal(d.backingFile, '/fast/vol.img');
  assert.equal(await backedBy(d, image), true);
  assert.equal(await backedBy(d, path.join(other, 'vol.img')), false, 'same tail, another inode');
  assert.equal(await backedBy(d, path.join(root, 'host', 'pools', 'slow', 'vol.img')), false, 'a file that does not exist');
});
