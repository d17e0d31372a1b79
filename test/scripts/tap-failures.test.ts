// The failure summary `npm test` ends with (scripts/tap-failures.sh), read from a real node test run's TAP report.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('../../../scripts/tap-failures.sh', import.meta.url));

/**
 * The TAP report of `node --test` over `files` (name to source), as the host part writes it, each
 * file bounded by `timeoutMs`: generous but for the file meant to outlive it, since a loaded
 * machine can take seconds to start a test file.
 */
function tapOf(files: Record<string, string>, timeoutMs = 60_000): string {
  const dir = mkdtempSync('/tmp/lode-test-tap-');
  try {
    for (const [name, source] of Object.entries(files)) writeFileSync(path.join(dir, name), source);
    const env: NodeJS.ProcessEnv = { ...process.env };
    delete env.NODE_TEST_CONTEXT;
    const log = path.join(dir, 'report.tap');
    spawnSync(process.execPath, ['--test', `--test-timeout=${timeoutMs}`, '--test-reporter=spec', '--test-reporter-destination=stdout',
      '--test-reporter=tap', `--test-reporter-destination=${log}`, ...Object.keys(files).map((f) => path.join(dir, f))], { env, encoding: 'utf8' });
    return readFileSync(log, 'utf8');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function summary(tap: string, env: NodeJS.ProcessEnv = {}): { out: string; err: string; status: number | null } {
  const r = spawnSync('bash', [SCRIPT], { input: tap, encoding: 'utf8', env: { ...process.env, ...env } });
  return { out: r.stdout, err: r.stderr, status: r.status };
}

const PREAMBLE = "import { describe, it } from 'node:test';\nimport assert from 'node:assert/strict';\n";

test('each failed test of each file is printed with its assertion and place; passing tests are not', () => {
  const tap = tapOf({
    'a.test.mjs': `${PREAMBLE}describe('outer', () => {\n  it('passes quietly', () => {});\n  it('breaks in a', () => { assert.equal(1, 2, 'one is not two'); });\n});\n`,
    'b.test.mjs': `${PREAMBLE}it('also passes', () => {});\nit('breaks in b', () => { assert.ok(false, 'b went wrong'); });\n`,
  });
  const { out, status } = summary(tap);
  assert.equal(status, 0);
  assert.match(out, /not ok \d+ - breaks in a\n/);
  assert.match(out, /one is not two/);
  assert.match(out, /a\.test\.mjs:5:/, 'the failing line');
  assert.match(out, /not ok \d+ - breaks in b\n/);
  assert.match(out, /b went wrong/);
  assert.doesNotMatch(out, /passes quietly|also passes/);
  assert.doesNotMatch(out, /(^|\n)ok /, 'no passing line at all');
});

test('a file that outlives its bound (the runner\'s --test-timeout, as npm test sets it) is printed by its path as timed out', () => {
  const tap = tapOf({ 'c.test.mjs': `${PREAMBLE}it('hangs too long', () => new Promise((r) => setTimeout(r, 4000)));\n` }, 2000);
  const { out } = summary(tap);
  assert.match(out, /not ok \d+ - \/tmp\/lode-test-tap-[^/]+\/c\.test\.mjs\n/);
  assert.match(out, /test timed out after 2000ms/);
});

test('a green report prints (none); long blocks are cut at LODE_TAP_FAILURE_LINES; a bad value is refused', () => {
  const green = tapOf({ 'd.test.mjs': `${PREAMBLE}it('fine', () => {});\n` });
  assert.equal(summary(green).out, '(none)\n');
  const red = tapOf({ 'e.test.mjs': `${PREAMBLE}it('long one', () => { assert.deepEqual([1, 2, 3, 4, 5, 6, 7, 8], [8, 7, 6, 5, 4, 3, 2, 1]); });\n` });
  const cut = summary(red, { LODE_TAP_FAILURE_LINES: '5' }).out.split('\n');
  assert.match(cut[0] ?? '', /not ok \d+ - long one/);
  assert.equal(cut[5], '  (cut)', cut.join('\n'));
  assert.ok(cut.length <= 8, 'the block stops at the cut');
  const bad = summary(red, { LODE_TAP_FAILURE_LINES: 'lots' });
  assert.equal(bad.status, 2);
  assert.match(bad.err, /LODE_TAP_FAILURE_LINES must be a whole number/);
});
