// The VM's speed scaling: the job script's factor from its timed loop, the bounds stretched by it on
// both sides, the tests' reading of LODE_VM_SLOWDOWN, and which directories get a share of their own.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { MAX_SLOWDOWN, REFERENCE_LOOP_MS, SLOWDOWN_MARK, guestFileSeconds, hostFileWaitMs, slowdownFunction, slowdownProbe } from './slowdown.js';
import { jobScript } from './guest-job.js';
import { extraShares } from './checkout-shares.js';
import { qemuArgs } from './vm.js';
import { scaledDeadlineMs, vmSlowdown } from '../helpers/vm-slowdown.js';

function permille(loopMs: number, referenceMs: number, max: number): number {
  return Number(execFileSync('sh', ['-c', `${slowdownFunction(referenceMs, max)}\nlode_slowdown_permille "$1"`, 'sh', String(loopMs)], { encoding: 'utf8' }).trim());
}

test('the factor is the loop time over the reference in thousandths, never below 1 and never above the cap', () => {
  assert.equal(permille(2500, 1000, 8), 2500);
  assert.equal(permille(1333, 1000, 8), 1333);
  assert.equal(permille(3000, 1200, 8), 2500);
  assert.equal(permille(400, 1000, 8), 1000, 'a guest faster than the reference keeps the bounds as written');
  assert.equal(permille(0, 1000, 8), 1000);
  assert.equal(permille(20_000, 1000, 8), 8000, 'capped, so a hang is still caught');
  assert.equal(permille(20_000, 1000, 3), 3000);
});

test('the probe, run by a real shell, prints the marker the host parses and exports the factor as a decimal', () => {
  const out = execFileSync('sh', ['-c', `${slowdownProbe().join('\n')}\necho "env=$LODE_VM_SLOWDOWN"`], { encoding: 'utf8' });
  const m = SLOWDOWN_MARK.exec(out);
  assert.ok(m, out);
  const p = Number(m[2]);
  assert.ok(p >= 1000 && p <= MAX_SLOWDOWN * 1000, out);
  assert.equal(p, permille(Number(m[1]), REFERENCE_LOOP_MS, MAX_SLOWDOWN), 'the factor follows from the measured time');
  const env = /^env=(\d+\.\d{3})$/m.exec(out)?.[1];
  assert.equal(env, `${Math.floor(p / 1000)}.${String(p % 1000).padStart(3, '0')}`);
  assert.equal(vmSlowdown({ LODE_VM_SLOWDOWN: env }), p / 1000);
});

test('the job script stretches each file\'s bound by the measured factor, as the host computes it', () => {
  const script = jobScript({ files: ['/x.test.js'], cwd: '/', reporter: '/r.js', modules: [], env: {}, fileTimeoutSeconds: 300 });
  // Everything up to the bound's computation, with a fixed measurement in place of the loop.
  const lines = script.split('\n');
  const upTo = lines.findIndex((l) => l.startsWith('file_timeout='));
  assert.ok(upTo > 0 && script.includes('timeout -k 10 "$file_timeout" node'), script);
  const fn = slowdownFunction();
  const shown = execFileSync('sh', ['-c', `${fn}\nlode_permille=$(lode_slowdown_permille ${REFERENCE_LOOP_MS * 1.5})\n${lines[upTo]}\necho "$file_timeout"`], { encoding: 'utf8' }).trim();
  assert.equal(Number(shown), guestFileSeconds(300, 1500));
  assert.equal(guestFileSeconds(300, 1500), 450);
  assert.equal(guestFileSeconds(300, 1000), 300);
  assert.equal(hostFileWaitMs(300_000, 1500), 480_000, 'the host waits for the guest\'s stretched bound plus its margin');
  assert.equal(hostFileWaitMs(420_000, 1000), 450_000, 'at the reference speed, the bounds as they were');
  assert.ok(hostFileWaitMs(10_000, 1337) > guestFileSeconds(10, 1337) * 1000);
});

test('the tests\' deadlines multiply by LODE_VM_SLOWDOWN; absent it they stay; a bad value is refused', () => {
  assert.equal(scaledDeadlineMs(60_000, {}), 60_000);
  assert.equal(scaledDeadlineMs(60_000, { LODE_VM_SLOWDOWN: '2.500' }), 150_000);
  assert.equal(scaledDeadlineMs(10_000, { LODE_VM_SLOWDOWN: '1' }), 10_000);
  for (const bad of ['fast', '0.5', '-2', '1e3', ' 2']) {
    assert.throws(() => vmSlowdown({ LODE_VM_SLOWDOWN: bad }), new RegExp(`LODE_VM_SLOWDOWN="${bad.replace('.', '\\.')}" must be a number of at least 1`));
  }
});

test('directories under the guest\'s /tmp or /run get one share each, the outermost; others none', () => {
  assert.deepEqual(extraShares(['/work/wt', '/work/wt/dist/test', '/usr/lib']), []);
  assert.deepEqual(extraShares(['/tmp/c/lode', '/tmp/c/lode/dist/test/vm-guest', '/tmp/c/lode/dist/test/vm', '/work/wt']), [{ tag: 'lodepath0', dir: '/tmp/c/lode' }]);
  assert.deepEqual(extraShares(['/tmp/b', '/run/tools/csi', '/tmpfoo/x', '/tmp/a/']), [
    { tag: 'lodepath0', dir: '/run/tools/csi' },
    { tag: 'lodepath1', dir: '/tmp/a' },
    { tag: 'lodepath2', dir: '/tmp/b' },
  ]);
  assert.throws(() => extraShares(['/tmp']), /cannot read from \/tmp itself \(the guest has its own \/tmp\); use a directory under it/);
  assert.throws(() => extraShares(['/run/']), /cannot read from \/run itself/);
  assert.throws(() => extraShares(['/tmp/lode-vm/x']), /the guest keeps its job files at \/tmp\/lode-vm; use another directory/);
  assert.deepEqual(extraShares(['/tmp/lode-vm-checkout']), [{ tag: 'lodepath0', dir: '/tmp/lode-vm-checkout' }]);

  // Each is exported read-only to qemu, a comma in its path doubled as qemu's option syntax wants.
  const host = { qemu: 'q', kernel: 'k', kernelVersion: 'v', modulesDir: 'm', busybox: 'b' };
  const args = qemuArgs(host, '/i', '/tmp/lode-vm-x', 2048, 2, extraShares(['/tmp/a,b/lode']));
  assert.equal(args[args.length - 2], '-virtfs');
  assert.equal(args[args.length - 1], 'local,path=/tmp/a,,b/lode,mount_tag=lodepath0,security_model=none,readonly=on,multidevs=remap');
  assert.equal(qemuArgs(host, '/i', '/tmp/lode-vm-x', 2048, 2, extraShares(['/work/wt'])).filter((a) => a === '-virtfs').length, 2, 'the root and the job share only');
});
