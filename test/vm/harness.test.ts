// The VM harness's own tests: guest results (including a deliberate failure) reach the host as they
// were, a guest file that hangs is cut off without costing the next, and a VM that cannot boot says why.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkPrerequisites, describeMissing, type VmHost } from './prerequisites.js';
import { underCi } from './host-suite.js';
import { runInVm, VmBootError } from './vm.js';
import { guestFileSeconds } from './slowdown.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const selftest = path.resolve(here, '../vm-guest/selftest');
const runJs = path.join(here, 'run.js');

const pre = checkPrerequisites();
const skip = !pre.ok && !underCi() ? describeMissing(pre) : false;

function vmHost(): VmHost {
  if (!pre.ok) throw new Error(describeMissing(pre));
  return pre.host;
}

/** qemu processes this test process started and that are still alive. */
function ourQemus(): number[] {
  const found: number[] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === process.pid && comm.startsWith('qemu')) found.push(Number(pid));
    } catch {
      // the process ended while we looked
    }
  }
  return found;
}

test('the CLI reports a guest failure as a failure with the guest assertion, and passes and skips as they were', { skip }, async () => {
  vmHost();
  const env = { ...process.env };
  // Inherited, it would make the child talk to this runner's protocol instead of printing TAP.
  delete env.NODE_TEST_CONTEXT;
  const child = spawn(process.execPath, ['--test-reporter=tap', runJs, path.join(selftest, 'passes.test.js'), path.join(selftest, 'fails-on-purpose.test.js')], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => { out += c; });
  child.stderr.setEncoding('utf8').on('data', (c: string) => { out += c; });
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));

  assert.equal(code, 1, `the run must fail because a guest test failed:\n${out}`);
  assert.match(out, /^ +not ok \d+ - the failing check$/m);
  assert.match(out, /deliberate guest failure 5d1c/, 'the guest assertion message reaches the host');
  assert.match(out, /42 !== 41/, 'and so do its actual and expected values');
  assert.match(out, /^not ok \d+ - in the VM: .*fails-on-purpose\.test\.js$/m);
  assert.match(out, /^ +ok \d+ - this guest test passes$/m);
  assert.match(out, /^ +ok \d+ - nested check$/m);
  assert.match(out, /^ +ok \d+ - skipped in the guest on purpose # SKIP deliberate skip$/m);
  assert.match(out, /^ok \d+ - in the VM: .*passes\.test\.js$/m);
  assert.match(out, /^# pass 4$/m);
  assert.match(out, /^# fail 3$/m);
  assert.match(out, /^# skipped 1$/m);
  assert.deepEqual(ourQemus(), []);
});

test('a guest file that never finishes is stopped by its bound, one that does not exist fails at once, and the next file still runs', { skip }, async () => {
  const missing = path.join(selftest, 'no-such-file.test.js');
  const vm = await runInVm([path.join(selftest, 'hangs.test.js'), missing, path.join(selftest, 'passes.test.js')], { host: vmHost(), fileTimeoutMs: 10_000 });
  const [hung, absent, next] = vm.files;
  assert.equal(hung?.exitCode, 124, 'timeout(1) reports 124 for a command it stopped');
  // The 10 s bound, stretched by the slowdown the guest measured at boot.
  assert.ok(vm.slowdown >= 1, `slowdown ${vm.slowdown}`);
  assert.match(hung?.problem ?? '', new RegExp(`did not finish within ${guestFileSeconds(10, Math.round(vm.slowdown * 1000))} s`));
  assert.notEqual(absent?.exitCode, 0);
  assert.deepEqual(absent?.tests, []);
  assert.match(absent?.console ?? '', /Could not find/, 'node\'s own complaint is in the file\'s console');
  assert.equal(next?.exitCode, 0);
  assert.deepEqual(next?.tests.map((r) => `${r.nesting} ${r.outcome} ${r.name}`), [
    '1 pass nested check',
    '0 pass runs in the guest with the VM kernel',
    '0 skip skipped in the guest on purpose',
  ]);
  assert.deepEqual(ourQemus(), []);
});

test('a kernel qemu cannot load: the error names the kernel and carries qemu\'s own message', { skip }, async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'lode-vm-bad-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const kernel = path.join(dir, 'vmlinuz-not-a-kernel');
  writeFileSync(kernel, 'this is not a kernel image\n');
  await assert.rejects(runInVm([path.join(selftest, 'passes.test.js')], { host: { ...vmHost(), kernel } }), (err: unknown) => {
    assert.ok(err instanceof VmBootError);
    assert.match(err.message, /qemu exited with code 1 before the job script ran/);
    assert.ok(err.message.includes(kernel));
    assert.doesNotMatch(err.message, /--- qemu stderr \(tail\) ---\n\(empty\)/, 'qemu said why');
    return true;
  });
  assert.deepEqual(ourQemus(), []);
});

test('an initramfs whose 9p modules do not load: the boot fails with init\'s reason instead of hanging', { skip }, async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'lode-vm-bad-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  // A modules tree whose only module is not a module: insmod in the initramfs must fail on it.
  mkdirSync(path.join(dir, 'kernel'));
  writeFileSync(path.join(dir, 'kernel', 'virtio_pci.ko'), 'not an ELF object\n');
  writeFileSync(path.join(dir, 'modules.dep'), 'kernel/virtio_pci.ko:\n');
  await assert.rejects(runInVm([path.join(selftest, 'passes.test.js')], { host: { ...vmHost(), modulesDir: dir } }), (err: unknown) => {
    assert.ok(err instanceof VmBootError);
    assert.match(err.message, /the test VM did not boot: insmod 00-virtio_pci\.ko failed/);
    return true;
  });
  assert.deepEqual(ourQemus(), []);
});

test('a boot that does not reach the job script within its bound is given up on and qemu is killed', { skip }, async () => {
  await assert.rejects(runInVm([path.join(selftest, 'passes.test.js')], { host: vmHost(), bootTimeoutMs: 1 }), (err: unknown) => {
    assert.ok(err instanceof VmBootError);
    assert.match(err.message, /did not reach the job script within 0\.001 s/);
    return true;
  });
  assert.deepEqual(ourQemus(), []);
});

test('a share left by a killed host process is removed by the next run; one without an owner record is kept', { skip }, async (t) => {
  const dead = spawn(process.execPath, ['-e', '']);
  const deadPid = dead.pid;
  await new Promise((resolve) => dead.on('close', resolve));
  assert.ok(deadPid);
  const stale = mkdtempSync(path.join(os.tmpdir(), 'lode-vm-'));
  writeFileSync(path.join(stale, 'owner.pid'), String(deadPid));
  writeFileSync(`${stale}.initrd`, 'left behind');
  const unowned = mkdtempSync(path.join(os.tmpdir(), 'lode-vm-'));
  t.after(() => {
    rmSync(unowned, { recursive: true, force: true });
    rmSync(stale, { recursive: true, force: true });
    rmSync(`${stale}.initrd`, { force: true });
  });
  const kernel = path.join(unowned, 'vmlinuz-not-a-kernel');
  writeFileSync(kernel, 'this is not a kernel image\n');
  // The quickest run there is: qemu refuses the kernel at once.
  await assert.rejects(runInVm([path.join(selftest, 'passes.test.js')], { host: { ...vmHost(), kernel } }), VmBootError);
  assert.equal(existsSync(stale), false, 'the dead owner\'s share is gone');
  assert.equal(existsSync(`${stale}.initrd`), false, 'and its initramfs');
  assert.equal(existsSync(unowned), true, 'a directory that does not say whose it is stays');
});
