// The tool seam, through the tool helper and directly: a tool dies with the driver that started it, is killed with its group, passes arguments and output unchanged, and a missing tool is still reported as not installed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { ExecError, run } from '../../src/sys/exec.js';
import { alive, until } from '../helpers/until.js';
import { childrenNamed } from '../helpers/child-processes.js';

const MODULE = new URL('../../src/sys/exec.js', import.meta.url).href;

/** The two ways a tool is started: through the helper (the default) and directly (LODE_TOOL_HELPER=off). */
const MODES = ['helper', 'off'] as const;

for (const mode of MODES) test(`a tool started through the seam (${mode === 'off' ? 'directly' : 'the helper'}) dies when its driver is SIGKILLed, instead of acting on after a restart`, async () => {
  // A driver stand-in: starts a long tool through run() (as mkfs or mount would be), says the tool's pid, waits to be killed.
  const dir = mkdtempSync('/tmp/lode-exec-');
  const pidFile = path.join(dir, 'tool.pid');
  const script = `import { run } from ${JSON.stringify(MODULE)};
    run('sh', ['-c', 'echo $$ > "$0.tmp" && mv "$0.tmp" "$0" && exec sleep 300', ${JSON.stringify(pidFile)}]).catch(() => {});
    setInterval(() => {}, 1000);`;
  const driver = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: 'ignore', env: { ...process.env, LODE_TOOL_HELPER: mode } });
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

test('arguments reach the tool byte for byte, and large output on both streams comes back whole', async () => {
  const args = ['a b', "it's", 'x\ny', '', 'é ✓', '$HOME', '"q"', '\\', '-n'];
  const printed = await run('printf', ['%s|', ...args]);
  assert.equal(printed.stdout, args.map((a) => `${a}|`).join(''));
  const big = await run('sh', ['-c', 'head -c 300000 /dev/zero | tr "\\0" a; head -c 100000 /dev/zero | tr "\\0" b >&2']);
  assert.equal(big.stdout.length, 300_000);
  assert.match(big.stdout, /^a+$/);
  assert.equal(big.stderr.length, 100_000);
  assert.match(big.stderr, /^b+$/);
});

test('tools run side by side: one waits for a file that a later one makes', async () => {
  const dir = mkdtempSync('/tmp/lode-exec-');
  try {
    const flag = path.join(dir, 'flag');
    // Run one after the other, the first would wait out its timeout and fail.
    const waiter = run('sh', ['-c', 'while [ ! -e "$0" ]; do sleep 0.02; done; echo seen', flag], { timeoutMs: 20_000 });
    await run('touch', [flag]);
    assert.equal((await waiter).stdout, 'seen\n');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a timeout kills the tool with everything it forked, and says so', async () => {
  const dir = mkdtempSync('/tmp/lode-exec-');
  const pidFile = path.join(dir, 'grandchild.pid');
  try {
    const failed = await run('sh', ['-c', 'sleep 300 & echo $! > "$0"; wait', pidFile], { timeoutMs: 500 }).then(() => undefined, (e: unknown) => e);
    assert.ok(failed instanceof ExecError);
    assert.equal(failed.signal, 'SIGKILL');
    assert.match(failed.message, /stopped: timed out after 500 ms/);
    const grandchild = Number(readFileSync(pidFile, 'utf8').trim());
    await until('the forked sleep died with its tool', () => !alive(grandchild), 10_000);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a tool that cannot be executed is reported with its errno, not as an exit code', async () => {
  const dir = mkdtempSync('/tmp/lode-exec-');
  try {
    const file = path.join(dir, 'not-executable');
    writeFileSync(file, '#!/bin/sh\n');
    chmodSync(file, 0o644);
    const failed = await run(file, []).then(() => undefined, (e: unknown) => e);
    assert.ok(failed instanceof ExecError);
    assert.equal(failed.spawnCode, 'EACCES');
    assert.equal(failed.exitCode, null);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a helper killed from outside fails the tools it ran, and the next tool starts a new one', async () => {
  await run('true', []);
  const helpers = childrenNamed('perl');
  assert.equal(helpers.length, 1, 'one tool helper serves this process');
  const running = run('sleep', ['300']).then(() => undefined, (e: unknown) => e);
  await new Promise((r) => setTimeout(r, 200));
  process.kill(helpers[0]!, 'SIGKILL');
  const failed = await running;
  assert.ok(failed instanceof ExecError);
  assert.match(failed.message, /tool helper ended \(SIGKILL\); the tool was killed with it/);
  assert.equal((await run('sh', ['-c', 'printf again'])).stdout, 'again');
  assert.equal(childrenNamed('perl').length, 1, 'a new helper');
});

for (const mode of MODES) test(`a process that has run a tool (${mode === 'off' ? 'directly' : 'through the helper'}) still exits on its own when it has nothing left to do`, async () => {
  const script = `import { run } from ${JSON.stringify(MODULE)};
    const r = await run('sh', ['-c', 'printf ran']);
    console.log(r.stdout);`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, LODE_TOOL_HELPER: mode } });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => { out += c; });
  const bound = setTimeout(() => child.kill('SIGKILL'), 20_000);
  const code = await new Promise<number | null>((r) => child.on('close', (c) => r(c)));
  clearTimeout(bound);
  assert.equal(code, 0, 'exited by itself, not killed at the bound');
  assert.equal(out, 'ran\n');
});

test('where the helper cannot run (it ends before it says it runs), tools start directly, and it is not tried again', async () => {
  const dir = mkdtempSync('/tmp/lode-exec-');
  try {
    // A perl that fails at once, as a broken one or a refused prctl would: it counts its starts.
    const starts = path.join(dir, 'starts');
    writeFileSync(path.join(dir, 'perl'), `#!/bin/sh\necho x >> ${JSON.stringify(starts)}\nexit 70\n`);
    chmodSync(path.join(dir, 'perl'), 0o755);
    const script = `import { run } from ${JSON.stringify(MODULE)};
      const a = await run('sh', ['-c', 'printf one']);
      const b = await Promise.all([run('sh', ['-c', 'printf two']), run('sh', ['-c', 'printf three'])]);
      console.log([a.stdout, ...b.map((r) => r.stdout)].join(' '));`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PATH: `${dir}:${process.env.PATH ?? ''}` },
    });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => { out += c; });
    child.stderr.setEncoding('utf8').on('data', (c: string) => { err += c; });
    const code = await new Promise<number | null>((r) => child.on('close', (c) => r(c)));
    assert.equal(code, 0, err);
    assert.equal(out, 'one two three\n');
    assert.match(err, /the tool helper ended \(exit 70\) before it ran: system tools are started by forking the driver instead/);
    assert.equal(readFileSync(starts, 'utf8'), 'x\n', 'the helper was tried once');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
