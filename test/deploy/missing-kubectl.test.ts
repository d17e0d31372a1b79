// The skip-or-fail rule end to end: a deploy test file without kubectl skips with the install line, and under CI=true fails with it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { KUBECTL_INSTALL } from '../helpers/kubectl.js';

const FILE = fileURLToPath(new URL('./node-pools.test.js', import.meta.url));

function runWithout(ci: boolean): { status: number | null; out: string } {
  // KUBECTL naming a file that does not exist is how a machine without kubectl looks to the tests.
  const env: NodeJS.ProcessEnv = { ...process.env, KUBECTL: '/nonexistent/kubectl', CI: ci ? 'true' : 'false' };
  // Set by the runner for its own children: with it the child would report to us instead of printing.
  delete env['NODE_TEST_CONTEXT'];
  const r = spawnSync(process.execPath, ['--test', '--test-reporter=tap', FILE], { env, encoding: 'utf8', timeout: 120_000 });
  return { status: r.status, out: r.stdout + r.stderr };
}

test('without kubectl a deploy test skips and says how to install it', () => {
  const r = runWithout(false);
  assert.equal(r.status, 0, r.out);
  assert.match(r.out, /# skipped [1-9]/, 'its tests are skipped, not passed');
  assert.ok(r.out.includes(KUBECTL_INSTALL), `the skip names the install line:\n${r.out}`);
});

test('under CI=true the same missing kubectl fails the file, with the install line', () => {
  const r = runWithout(true);
  assert.notEqual(r.status, 0, `the file must fail:\n${r.out}`);
  assert.match(r.out, /CI=true: kubectl not found at KUBECTL=\/nonexistent\/kubectl/);
  assert.ok(r.out.includes(KUBECTL_INSTALL), r.out);
});
