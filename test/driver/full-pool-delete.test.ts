// A delete marks its record "deleting" before it touches the image; on a filesystem too full for that mark it must still delete.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { run } from '../../src/sys/exec.js';
import { DriverHarness } from '../helpers/driver-harness.js';
import { createVolume, diskState, MiB, rawCap } from './support.js';

/** Writes zeros to `file` until the filesystem holding it is full; returns how many bytes fitted. */
async function fillUp(file: string): Promise<number> {
  const chunk = Buffer.alloc(MiB);
  const handle = await fs.open(file, 'w');
  let written = 0;
  try {
    for (;;) {
      try {
        written += (await handle.write(chunk, 0, chunk.length)).bytesWritten;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOSPC') break;
        throw err;
      }
    }
    // The last partial page, so that not even a small record fits.
    for (let size = 512; size >= 1; size = Math.floor(size / 2)) {
      try {
        for (;;) written += (await handle.write(chunk, 0, size)).bytesWritten;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
      }
    }
  } finally {
    await handle.close();
  }
  return written;
}

test('DeleteVolume on a pool filesystem too full to rewrite the record still deletes the volume and frees its space', async () => {
  const h = await DriverHarness.start({ pools: [{ name: 'fast' }] });
  const poolDir = h.poolDir('fast');
  await h.stop();
  // A small filesystem of the test's own, so filling it up touches nothing else on the machine.
  await run('mount', ['-t', 'tmpfs', '-o', 'size=64m', 'lode-test-full', poolDir]);
  try {
    await h.startProcess();
    const { id } = await createVolume(h, 'on-full', 16 * MiB, { cap: rawCap() });
    const filler = path.join(poolDir, 'filler');
    assert.ok((await fillUp(filler)) > 0);
    await assert.rejects(fs.writeFile(path.join(poolDir, 'probe'), 'x'), /ENOSPC/, 'the filesystem is full');
    await fs.rm(path.join(poolDir, 'probe'), { force: true });

    await h.client.deleteVolume({ volume_id: id });
    assert.deepEqual(await h.poolFiles(), [], 'image and record gone');
    assert.equal((await h.client.listVolumes({})).entries.length, 0);
    assert.ok(h.log.includes('no space to mark the volume deleting'), 'the fallback was taken, and said so');
    await fs.rm(filler);
    const state = await diskState(h);
    assert.deepEqual([state.files, state.loops], [[], []]);
  } finally {
    await h.stop();
    await run('umount', [poolDir]).catch(() => undefined);
    await h.cleanup();
  }
});
