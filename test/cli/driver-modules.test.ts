// What a driver without API access loads: none of the bench's modules and not the API client library, whose files are most of the package's and cost every driver start (seconds on a slow node).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { DriverHarness } from '../helpers/driver-harness.js';

/** A preload that has node's module loader append each loaded URL to `out`. */
async function loadRecorder(dir: string, out: string): Promise<string> {
  const hooks = path.join(dir, 'hooks.mjs');
  await fs.writeFile(hooks, [
    "import { appendFileSync } from 'node:fs';",
    `export async function load(url, context, next) { appendFileSync(${JSON.stringify(out)}, url + '\\n'); return next(url, context); }`,
  ].join('\n'));
  const preload = path.join(dir, 'register.mjs');
  await fs.writeFile(preload, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`);
  return preload;
}

test('a driver without API access serves Probe having loaded neither the bench nor the API client library', async (t) => {
  const dir = await fs.mkdtemp(path.join('/tmp', 'lode-modules-'));
  t.after(() => fs.rm(dir, { recursive: true, force: true }));
  const out = path.join(dir, 'loaded.txt');
  const preload = await loadRecorder(dir, out);
  const h = await DriverHarness.start({ pools: [{ name: 'fast', size: '64Mi' }] }, { NODE_OPTIONS: `--import=${pathToFileURL(preload).href}` });
  t.after(() => h.cleanup());
  const loaded = (await fs.readFile(out, 'utf8')).split('\n').filter((u) => u !== '');
  assert.ok(loaded.some((u) => u.endsWith('/src/driver/server.js')), `the recorder saw the driver's own modules (${loaded.length} loaded)`);
  assert.ok(loaded.some((u) => u.includes('/node_modules/@grpc/grpc-js/')), 'and its gRPC library');
  assert.deepEqual(loaded.filter((u) => u.includes('/src/bench/')), [], 'no module of the bench');
  assert.deepEqual(loaded.filter((u) => u.includes('/node_modules/@kubernetes/client-node/')), [], 'nor the API client library');
});
