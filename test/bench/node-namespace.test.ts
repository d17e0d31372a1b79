// A simulated node's mount namespace and the template it is copied from: a node's mounts stay in it, a filesystem mounted on the host after the template never reaches a node, and the template the environment names is used only where it shows the work dir.
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { NodeNamespace } from '../../src/bench/nodes/node-namespace.js';
import { MOUNT_TEMPLATE_ENV, MountTemplate } from '../../src/bench/nodes/mount-template.js';
import { readMountTable } from '../../src/sys/mounts.js';
import { attachNewLoop, backingFileOf, detachLoop } from '../../src/sys/loop.js';
import { run } from '../../src/sys/exec.js';
import { needsRoot } from './run-helpers.js';

/**
 * A scratch directory for one test and the undoing of what the test set up in it, last first
 * (a mount before its image's detach, both before the directory goes), after the test.
 */
function scratch(t: TestContext): { root: string; defer: (undo: () => unknown) => void } {
  const root = mkdtempSync('/tmp/lode-ns-test-');
  const undos: (() => unknown)[] = [() => rmSync(root, { recursive: true, force: true })];
  t.after(async () => {
    for (const undo of undos.reverse()) await Promise.resolve().then(undo).catch(() => undefined);
  });
  return { root, defer: (undo) => undos.push(undo) };
}

/** A template for one test, ended after it. */
async function template(defer: (undo: () => unknown) => void, keep: string): Promise<MountTemplate> {
  const tpl = await MountTemplate.make(keep);
  defer(() => tpl.close());
  return tpl;
}

/** A 16 MiB ext4 in an image under `root`, attached and mounted on the host at root/<name>. */
async function hostLoopMount(defer: (undo: () => unknown) => void, root: string, name: string): Promise<{ device: string; at: string }> {
  const image = join(root, `${name}.img`);
  const at = join(root, name);
  writeFileSync(image, '');
  truncateSync(image, 16 * 2 ** 20);
  const { device } = await attachNewLoop(image, false, false);
  defer(() => detachLoop(device));
  await run('mkfs.ext4', ['-q', device]);
  mkdirSync(at);
  await run('mount', [device, at]);
  defer(() => run('umount', ['-l', at]));
  return { device, at };
}

/** Mount points in the table of process `pid` at or below `dir`. */
function mountPointsIn(pid: number, dir: string): string[] {
  return readFileSync(`/proc/${pid}/mountinfo`, 'utf8').split('\n').map((l) => l.split(' ')[4] ?? '').filter((m) => m === dir || m.startsWith(`${dir}/`));
}

describe('a node\'s mount namespace', { skip: needsRoot }, () => {
  it('keeps its mounts from the host, shows them through its view, and unmounts and reports a leftover as it closes', async (t) => {
    const { root, defer } = scratch(t);
    const dir = join(root, 'node', 'vol');
    mkdirSync(dir, { recursive: true });
    const ns = await NodeNamespace.open(await template(defer, root));
    defer(() => ns.kill());
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

  it('a second namespace of the same template sees none of the first one\'s mounts, nor does the template', async (t) => {
    const { root, defer } = scratch(t);
    const dir = join(root, 'vol');
    mkdirSync(dir);
    const tpl = await template(defer, root);
    const a = await NodeNamespace.open(tpl);
    defer(() => a.kill());
    const b = await NodeNamespace.open(tpl);
    defer(() => b.kill());
    await a.run('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir]);
    assert.deepEqual(await a.mountsUnder(root), [dir]);
    assert.deepEqual(await b.mountsUnder(root), []);
    assert.deepEqual(mountPointsIn(tpl.pid, root), [], 'nothing flows back into the template');
    assert.deepEqual(await b.close(root), [], 'nothing to clean in the other');
    assert.deepEqual(await a.close(root), [`umount ${dir}`]);
  });

  it('never holds a filesystem mounted on the host after the template was made: its owner\'s unmount and detach complete at once', async (t) => {
    const { root, defer } = scratch(t);
    const nodeDir = join(root, 'nodes', 'n1');
    mkdirSync(nodeDir, { recursive: true });
    const tpl = await template(defer, root);
    // Another test's filesystem, mounted beside the bench after its template was made.
    const other = await hostLoopMount(defer, root, 'other');
    const ns = await NodeNamespace.open(tpl);
    defer(() => ns.kill());
    assert.ok((await readMountTable()).some((m) => m.mountPoint === other.at), 'mounted on the host');
    assert.deepEqual(mountPointsIn(ns.pid, root), [], 'the node\'s table has no copy of it');
    assert.ok(existsSync(ns.view(nodeDir)), 'yet the node\'s directory, made on the host after the template, is there');

    // Its owner unmounts and detaches it: the device is free at once, not held by the node.
    await run('umount', [other.at]);
    await detachLoop(other.device);
    assert.equal(await backingFileOf(other.device), undefined, `${other.device} detached at once, not deferred`);
    assert.deepEqual(await ns.close(nodeDir), []);
  });

  it('a template the bench makes drops the loop-device mounts already on the host, but the one holding the work dir', async (t) => {
    const { root, defer } = scratch(t);
    // Another user's filesystem (a test beside this one), and the one the work dir is on.
    const other = await hostLoopMount(defer, root, 'other');
    const home = await hostLoopMount(defer, root, 'home');
    const workDir = join(home.at, 'bench');
    mkdirSync(workDir);
    const tpl = await template(defer, workDir);
    assert.equal(tpl.made, true);
    assert.deepEqual(mountPointsIn(tpl.pid, root), [home.at], 'the other filesystem is dropped; the work dir\'s is kept');
    const ns = await NodeNamespace.open(tpl);
    defer(() => ns.kill());
    assert.deepEqual(await ns.mountsUnder(root), [home.at], 'and a node copies just that');

    await run('umount', [other.at]);
    await detachLoop(other.device);
    assert.equal(await backingFileOf(other.device), undefined, `${other.device} detached at once`);
    assert.deepEqual(await ns.close(workDir), []);
  });
});

describe('the run\'s mount template', { skip: needsRoot }, () => {
  it(`is the one ${MOUNT_TEMPLATE_ENV} names where it shows the work dir, else one the bench makes, and a value that names none is an error`, async (t) => {
    const { root, defer } = scratch(t);
    const plain = join(root, 'plain');
    mkdirSync(plain);
    const given = await template(defer, root);
    const env = { [MOUNT_TEMPLATE_ENV]: String(given.pid) };

    const adopted = await MountTemplate.forRun(plain, env);
    assert.deepEqual([adopted.pid, adopted.made], [given.pid, false], 'a directory made after the template is there: the given template serves');
    await adopted.close();
    assert.ok(existsSync(`/proc/${given.pid}`), 'and closing it for a run leaves its maker\'s holder alone');

    // A work dir on a filesystem mounted after the template: the template has only the empty directory beneath.
    const mounted = join(root, 'mounted');
    mkdirSync(mounted);
    await run('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', mounted]);
    defer(() => run('umount', ['-l', mounted]));
    const own = await MountTemplate.forRun(mounted, env);
    defer(() => own.close());
    assert.equal(own.made, true, 'the bench made its own');
    assert.notEqual(own.pid, given.pid);
    assert.deepEqual(mountPointsIn(own.pid, mounted), [mounted], 'and it shows the work dir\'s filesystem');
    await own.close();
    assert.equal(existsSync(`/proc/${own.pid}`), false, 'a template the run made ends with it');

    const self = await MountTemplate.forRun(plain, { [MOUNT_TEMPLATE_ENV]: String(process.pid) });
    defer(() => self.close());
    assert.equal(self.made, true, 'the bench\'s own namespace is no template');

    await assert.rejects(MountTemplate.forRun(plain, { [MOUNT_TEMPLATE_ENV]: 'x12' }), new RegExp(`${MOUNT_TEMPLATE_ENV} must be the pid`));
    await assert.rejects(MountTemplate.forRun(plain, { [MOUNT_TEMPLATE_ENV]: '999999999' }), /no such process/);
  });
});
