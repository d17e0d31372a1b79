// Without qemu or the kernel the VM tests say what to install: skipped on a developer's machine,
// failed under CI, so that a CI machine without them cannot pass by running nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkPrerequisites, describeMissing } from './prerequisites.js';

const runJs = fileURLToPath(new URL('./run.js', import.meta.url));
const passes = path.resolve(path.dirname(runJs), '../vm-guest/selftest/passes.test.js');

function runCli(env: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string }> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env };
  delete childEnv.NODE_TEST_CONTEXT;
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete childEnv[k];
  const child = spawn(process.execPath, ['--test-reporter=tap', runJs, passes], { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => { out += c; });
  child.stderr.setEncoding('utf8').on('data', (c: string) => { out += c; });
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, out })));
}

// A PATH without qemu and a kernel path that does not exist: what a machine without the packages has.
const bare = { PATH: '/nonexistent', LODE_VM_KERNEL: '/nonexistent/vmlinuz-0.0.0' };

test('a missing qemu, kernel or tool is named with the Debian package to install', () => {
  const prevPath = process.env.PATH;
  const prevKernel = process.env.LODE_VM_KERNEL;
  process.env.PATH = bare.PATH;
  process.env.LODE_VM_KERNEL = bare.LODE_VM_KERNEL;
  try {
    const p = checkPrerequisites([{ command: 'lode-no-such-tool', pkg: 'lode-no-such-package' }]);
    assert.equal(p.ok, false);
    if (p.ok) return;
    assert.ok(p.missing.includes('qemu-system-x86_64'));
    assert.ok(p.missing.includes('lode-no-such-tool'));
    assert.ok(p.install.includes('qemu-system-x86'));
    assert.ok(p.install.includes('linux-image-amd64'));
    assert.ok(p.install.includes('lode-no-such-package'));
    assert.match(describeMissing(p), /apt-get install -y qemu-system-x86 linux-image-amd64 .*lode-no-such-package/);
  } finally {
    process.env.PATH = prevPath;
    if (prevKernel === undefined) delete process.env.LODE_VM_KERNEL;
    else process.env.LODE_VM_KERNEL = prevKernel;
  }
});

test('outside CI, missing prerequisites skip the VM tests with the apt-get line', async () => {
  const r = await runCli({ ...bare, CI: undefined });
  assert.equal(r.code, 0, r.out);
  assert.match(r.out, /# SKIP the VM tests need qemu-system-x86_64.*apt-get install -y qemu-system-x86 linux-image-amd64/);
  assert.match(r.out, /^# skipped 1$/m);
});

test('under CI=true, missing prerequisites fail the VM tests with the same message', async () => {
  const r = await runCli({ ...bare, CI: 'true' });
  assert.equal(r.code, 1, r.out);
  assert.match(r.out, /^not ok 1 - in the VM: /m);
  assert.match(r.out, /the VM tests need qemu-system-x86_64.*apt-get install -y qemu-system-x86 linux-image-amd64/);
  assert.match(r.out, /^# fail 1$/m);
});
