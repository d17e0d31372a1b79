// Stage and publish paths never lead out of the target root: dangling links, loops, files in the way, long names, and links flipped during the call.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { DriverHarness } from '../helpers/driver-harness.js';
import { grpcCode } from '../../src/csi/client.js';
import { createVolume, expectCode, fsCap, MiB, rawCap, status, tree } from './support.js';

let h: DriverHarness;
let outside: string;

/** Mount points anywhere on the machine that lie below `dir`. */
async function mountsBelow(dir: string): Promise<string[]> {
  const text = await fs.readFile('/proc/self/mountinfo', 'utf8');
  return text.split('\n').map((l) => l.split(' ')[4] ?? '').filter((m) => m === dir || m.startsWith(dir + '/'));
}

before(async () => {
  h = await DriverHarness.start({ pools: [{ name: 'fast', size: '512Mi' }] });
  outside = path.join(h.root, 'outside');
  await fs.mkdir(outside);
  await fs.writeFile(path.join(outside, 'precious'), 'keep');
  await fs.mkdir(path.join(h.kubeletDir, 'pods'), { recursive: true });
});
after(async () => {
  await h?.cleanup();
});

/** A staged filesystem volume and a staged raw block volume to publish, and their teardown over CSI. */
async function stageBoth(tag: string) {
  const fsVol = await createVolume(h, `${tag}-fs`, 16 * MiB);
  const blockVol = await createVolume(h, `${tag}-block`, 16 * MiB, { cap: rawCap() });
  const fsStaging = h.stagingPath(`${tag}-fs`);
  const blockStaging = h.stagingPath(`${tag}-block`);
  await h.client.nodeStageVolume({ volume_id: fsVol.id, staging_target_path: fsStaging, volume_capability: fsCap() });
  await h.client.nodeStageVolume({ volume_id: blockVol.id, staging_target_path: blockStaging, volume_capability: rawCap() });
  const teardown = async () => {
    await h.client.nodeUnstageVolume({ volume_id: fsVol.id, staging_target_path: fsStaging });
    await h.client.nodeUnstageVolume({ volume_id: blockVol.id, staging_target_path: blockStaging });
    await h.client.deleteVolume({ volume_id: fsVol.id });
    await h.client.deleteVolume({ volume_id: blockVol.id });
  };
  return { fsVol, blockVol, fsStaging, blockStaging, teardown };
}

test('dangling, looping and foreign links, files in the way and over-long names are INVALID_ARGUMENT for every path call, and touch nothing', async () => {
  const { fsVol, blockVol, fsStaging, blockStaging, teardown } = await stageBoth('esc');

  const pods = path.join(h.kubeletDir, 'pods');
  await fs.symlink(path.join(outside, 'made-by-driver'), path.join(pods, 'dangling-abs'));
  await fs.symlink(path.relative(pods, path.join(outside, 'made-by-driver-rel')), path.join(pods, 'dangling-rel'));
  await fs.symlink('loop-b', path.join(pods, 'loop-a'));
  await fs.symlink('loop-a', path.join(pods, 'loop-b'));
  await fs.symlink(outside, path.join(pods, 'to-outside'));
  await fs.writeFile(path.join(pods, 'a-file'), 'x');
  const hostile = [
    path.join(pods, 'dangling-abs'),
    path.join(pods, 'dangling-rel'),
    path.join(pods, 'dangling-abs', 'mount'),
    path.join(pods, 'loop-a'),
    path.join(pods, 'loop-a', 'mount'),
    path.join(pods, 'to-outside', 'mount'),
    path.join(pods, 'a-file', 'mount'),
    path.join(pods, 'x'.repeat(256), 'mount'),
  ];
  const before = await tree(outside);
  for (const target of hostile) {
    const what = path.relative(pods, target).slice(0, 40);
    await expectCode(h.client.nodePublishVolume({
      volume_id: blockVol.id, staging_target_path: blockStaging, target_path: target, volume_capability: rawCap(),
    }), status.INVALID_ARGUMENT, `block publish at ${what}`);
    await expectCode(h.client.nodePublishVolume({
      volume_id: fsVol.id, staging_target_path: fsStaging, target_path: target, volume_capability: fsCap(),
    }), status.INVALID_ARGUMENT, `filesystem publish at ${what}`);
    const other = await createVolume(h, `esc-stage-${hostile.indexOf(target)}`, 16 * MiB);
    await expectCode(h.client.nodeStageVolume({ volume_id: other.id, staging_target_path: target, volume_capability: fsCap() }),
      status.INVALID_ARGUMENT, `stage at ${what}`);
    assert.deepEqual(await h.loops().then((l) => l.length), 2, `a refused stage at ${what} leaves no loop device attached`);
    await h.client.deleteVolume({ volume_id: other.id });
  }
  // A file where a filesystem publication needs a directory.
  await expectCode(h.client.nodePublishVolume({
    volume_id: fsVol.id, staging_target_path: fsStaging, target_path: path.join(pods, 'a-file'), volume_capability: fsCap(),
  }), status.INVALID_ARGUMENT, 'filesystem publish onto a file');
  assert.deepEqual(await tree(outside), before, 'nothing was created outside the target root');
  assert.deepEqual(await mountsBelow(outside), [], 'nothing was mounted outside the target root');
  assert.deepEqual(await h.mounts(), [fsStaging], 'only the staging mount is there');

  await teardown();
});

test('a path component flipped between absent and a link to outside while publishing never puts a file or mount outside', async () => {
  const { fsVol, blockVol, fsStaging, blockStaging, teardown } = await stageBoth('flip');
  const flipping = path.join(h.kubeletDir, 'pods', 'flip');
  // Another process flips the component as fast as it can, so the driver's steps interleave with it.
  const flipper = spawn(process.execPath, ['-e', `
    const fs = require('fs');
    const [link, to] = process.argv.slice(1);
    for (;;) {
      try { fs.symlinkSync(to, link); } catch {}
      try { fs.unlinkSync(link); } catch {}
      try { fs.rmSync(link, { recursive: true, force: true }); } catch {}
    }`, flipping, outside], { stdio: 'ignore' });
  const published: Array<{ id: string; target: string }> = [];
  const outcomes = new Map<string, number>();
  try {
    for (let i = 0; i < 120; i++) {
      const block = i % 2 === 1;
      const target = path.join(flipping, `t${i}`);
      try {
        await h.client.nodePublishVolume(block
          ? { volume_id: blockVol.id, staging_target_path: blockStaging, target_path: target, volume_capability: rawCap() }
          : { volume_id: fsVol.id, staging_target_path: fsStaging, target_path: target, volume_capability: fsCap() });
        published.push({ id: block ? blockVol.id : fsVol.id, target });
        outcomes.set('OK', (outcomes.get('OK') ?? 0) + 1);
      } catch (err) {
        const code = grpcCode(err);
        const name = code === undefined ? String(err) : status[code];
        outcomes.set(name, (outcomes.get(name) ?? 0) + 1);
      }
    }
  } finally {
    flipper.kill('SIGKILL');
    await new Promise((r) => flipper.once('exit', r));
  }
  assert.deepEqual(await mountsBelow(outside), [], 'nothing was mounted outside the target root');
  assert.deepEqual(await tree(outside), ['precious'], 'nothing was created outside the target root');
  for (const code of outcomes.keys()) assert.ok(['OK', 'INVALID_ARGUMENT', 'ABORTED'].includes(code), `unexpected outcome ${code}: ${JSON.stringify([...outcomes])}`);
  for (const p of published) {
    const real = await fs.realpath(p.target);
    assert.ok(real.startsWith(h.kubeletDir + '/'), `${p.target} is inside the root`);
    await h.client.nodeUnpublishVolume({ volume_id: p.id, target_path: real });
  }
  await fs.rm(flipping, { recursive: true, force: true });
  await teardown();
  assert.deepEqual(await h.mounts(), []);
  assert.deepEqual(await h.loops(), []);
});
