// The tool seam: a tool dies with the driver that started it, and a missing tool is still reported as not installed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import * as path from 'node:path';
import { ExecError, run } from '../../src/sys/exec.js';
import { alive, until } from '../helpers/until.js';

const MODULE = new URL('../../src/sys/exec.js', import.meta.url).href;

test('a tool started through the seam dies when its driver is SIGKILLed, instead of acting on after a restart', async () => {
  // A driver stand-in: starts a long tool through run() (as mkfs or mount would be), says the tool's pid, waits to be killed.
  const dir = mkdtempSync('/tmp/lode-exec-');
  const pidFile = path.join(dir, 'tool.pid');
  const script = `import { run } from ${JSON.stringify(MODULE)};
    run('sh', ['-c', 'echo $$ > "$0.tmp" && mv "$0.tmp" "$0" && exec sleep 300', ${JSON.stringify(pidFile)}]).catch(() => {});
    setInterval(() => {}, 1000);`;
  const driver = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: 'ignore' });
  let tool: number | undefined;
  try {
    await until('the tool started', () => existsSync(pidFile));
    tool = Number(readFileSync(pidFile, 'utf8').trim());
    assert.ok(alive(tool), 'the tool runs');
    const gone = new Promise((r) => driver.on('exit', r));
    driver.kill('SIGKILL');
    await gone;
    await until('the tool died with its driver', () => !alive(tool!), 10_000);
  } finally {
    if (tool !== undefined && alive(tool)) process.kill(tool, 'SIGKILL');
    if (driver.exitCode === null && driver.signalCode === null) driver.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a tool that is not installed is ENOENT, "not installed", and a tool\'s own failure keeps its exit code and message', async () => {
  const missing = await run('lode-no-such-tool', ['x']).then(() => undefined, (e: unknown) => e);
  assert.ok(missing instanceof ExecError);
  assert.equal(missing.spawnCode, 'ENOENT');
  assert.match(missing.message, /lode-no-such-tool could not start \(ENOENT\): lode-no-such-tool is not installed/);
  const failed = await run('sh', ['-c', 'echo broken >&2; exit 3']).then(() => undefined, (e: unknown) => e);
  assert.ok(failed instanceof ExecError);
  assert.equal(failed.exitCode, 3);
  assert.equal(failed.spawnCode, undefined);
  assert.match(failed.message, /sh exited with 3: broken/);
  assert.equal((await run('sh', ['-c', 'printf ok'])).stdout, 'ok');
});
