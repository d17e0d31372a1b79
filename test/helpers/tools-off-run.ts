// Test support: a test file run again as a child with LODE_TOOL_HELPER=off, for files whose cases must pass both through the tool helper and with every tool started directly.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** Whether this process is that second run: the cases that only the helper's way has skip there. */
export const toolsStartDirectly = process.env.LODE_TOOL_HELPER === 'off';

/**
 * Runs the test file at `url` (its import.meta.url) with LODE_TOOL_HELPER=off and asserts that it
 * exits 0 having passed `passes` cases, so a case skipped or lost there fails here.
 */
export async function passesWithToolsStartedDirectly(url: string, passes: number): Promise<void> {
  // Run as a plain script (the runner's context variable removed, or it would skip as a nested run).
  const { NODE_TEST_CONTEXT: _nested, ...env } = process.env;
  const child = spawn(process.execPath, ['--test-reporter=tap', fileURLToPath(url)], {
    stdio: ['ignore', 'pipe', 'pipe'], env: { ...env, LODE_TOOL_HELPER: 'off' },
  });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => { out += c; });
  child.stderr.setEncoding('utf8').on('data', (c: string) => { out += c; });
  const code = await new Promise<number | null>((r) => child.on('close', (c) => r(c)));
  assert.equal(code, 0, out);
  assert.match(out, new RegExp(`# pass ${passes}\\b`), out);
}
