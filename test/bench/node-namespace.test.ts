// A simulated node's mount namespace: what is mounted inside is seen through its view and not on the host, a leftover is unmounted and reported when it closes, and the namespace ends with it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { NodeNamespace } from '../../src/bench/nodes/node-namespace.js';
import { readMountTable } from '../../src/sys/mounts.js';
import { attachNewLoop, backingFileOf, detachLoop } from '../../src/sys/loop.js';
import { run } from '../../src/sys/exec.js';
import { needsRoot } from './run-helpers.js';

describe('a node\'s mount namespace', { skip: needsRoot }, () => {
  it('keeps its mounts from the host, shows them through its view, and unmounts and reports a leftover as it closes', async (t) => {
    const root = mkdtempSync('/tmp/lode-ns-test-');
    t.after(() => rmSync(root, { recursive: true, force: true }));
    const dir = join(root, 'node', 'vol');
    mkdirSync(dir, { recursive: true });
    const ns = await NodeNamespace.open(root);
    t.after(() => ns.kill());
    await ns.run('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir]);

    assert.ok((await ns.mounts()).some((m) => m.mountPoint === dir && m.fsType === 'tmpfs'), 'mounted inside');
    assert.equal((await readMountTable()).some((m) => m.mountPoint === dir), false, 'not in the host\'s table');
    writeFileSync(join(ns.view(dir), 'f'), 'inside');
    assert.equal(readFileSync(join(ns.view(dir), 'f'), 'utf8'), 'inside', 'the view reaches the mounted filesystem');
    assert.equal(existsSync(join(dir, 'f')), false, 'the host sees the empty directory beneath it');
    const [cmd, args] = ns.command('cat', [join(dir, 'f')]);
    assert.deepEqual([cmd, args.at(-2), args.at(-1)], ['nsenter', 'cat', join(dir, 'f')]);
    assert.equal((await ns.run('cat', [join(dir, 'f')])).stdout, 'inside', 'a tool run inside sees it too');

    assert.deepEqual(await ns.close(join(root, 'node')), [`umount ${dir}`], 'the leftover is unmounted and named');
    assert.equal(existsSync(`/proc/${ns.pid}`), false, 'the holder is gone, and the namespace with it');
  });

  it('a second namespace sees none of the first one\'s mounts', async (t) => {
    const root = mkdtempSync('/tmp/lode-ns-test-');
    t.after(() => rmSync(root, { recursive: true, force: true }));
    const dir = join(root, 'vol');
    mkdirSync(dir);
    const a = await NodeNamespace.open(root);
    t.after(() => a.kill());
    const b = await NodeNamespace.open(root);
    t.after(() => b.kill());
    await a.run('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir]);
    assert.deepEqual(await a.mountsUnder(root), [dir]);
    assert.deepEqual(await b.mountsUnder(root), []);
    assert.deepEqual(await b.close(root), [], 'nothing to clean in the other');
    assert.deepEqual(await a.close(root), [`umount ${dir}`]);
  });

  it('leaves behind the loop-device mounts it copied from the host, but the one holding the node\'s directory', async (t) => {
    const root = mkdtempSync('/tmp/lode-ns-test-');
    const loops: string[] = [];
    t.after(async () => {
      for (const d of ['other', 'home']) await run('umount', ['-l', join(root, d)]).catch(() => undefined);
      for (const l of loops) await detachLoop(l).catch(() => undefined);
      rmSync(root, { recursive: true, force: true });
    });
    // Another user's filesystem (a test beside this one), and the one the node's directory is on.
    const mounted: Record<string, string> = {};
    for (const d of ['other', 'home']) {
      const image = join(root, `${d}.img`);
      writeFileSync(image, '');
      truncateSync(image, 16 * 2 ** 20);
      const { device } = await attachNewLoop(image, false, false);
      loops.push(device);
      await run('mkfs.ext4', ['-q', device]);
      mkdirSync(join(root, d));
      await run('mount', [device, join(root, d)]);
      mounted[d] = device;
    }
    const nodeDir = join(root, 'home', 'nodes', 'n1');
    mkdirSync(nodeDir, { recursive: true });
    const ns = await NodeNamespace.open(nodeDir);
    t.after(() => ns.kill());
    assert.deepEqual(await ns.mountsUnder(root), [join(root, 'home')], 'the other filesystem is not copied in; the node\'s own is');

    // Its owner unmounts and detaches it: the device is free at once, not held by the node.
    await run('umount', [join(root, 'other')]);
    await detachLoop(mounted.other!);
    assert.equal(await backingFileOf(mounted.other!), undefined, `${mounted.other} detached`);
    assert.deepEqual(await ns.close(nodeDir), []);
  });
});
