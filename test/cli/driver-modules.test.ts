// What a driver loads: none of the bench's modules and not the API client library (its files are most of the package's, cost every driver start and some 50 MiB resident), with or without API access; no YAML parser without a kubeconfig.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { DriverHarness } from '../helpers/driver-harness.js';
import { ApiCluster } from '../helpers/api-cluster.js';

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
  // Only a kubeconfig is YAML; its parser is a quarter of the modules a driver would load at start.
  assert.deepEqual(loaded.filter((u) => u.includes('/node_modules/yaml/')), [], 'nor the YAML parser');
});

test('a driver with API access reaches the API through its own client, not the API client library', async (t) => {
  const dir = await fs.mkdtemp(path.join('/tmp', 'lode-modules-api-'));
  t.after(() => fs.rm(dir, { recursive: true, force: true }));
  const api = new ApiCluster({ dirPrefix: 'lode-modules-api-' });
  api.store.create('Node', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-api' } });
  await api.start();
  t.after(() => api.stop());
  const out = path.join(dir, 'loaded.txt');
  const preload = await loadRecorder(dir, out);
  const h = await DriverHarness.start({ nodeId: 'node-api', pools: [{ name: 'fast', size: '64Mi' }], extraArgs: ['--kubeconfig', api.kubeconfig] }, { NODE_OPTIONS: `--import=${pathToFileURL(preload).href}` });
  t.after(() => h.cleanup());
  assert.ok(api.requests.includes('lode-driver get nodes'), `the driver read its Node at start (${api.requests.join(', ')})`);
  const loaded = (await fs.readFile(out, 'utf8')).split('\n').filter((u) => u !== '');
  assert.ok(loaded.some((u) => u.endsWith('/src/kube/http-transport.js')), 'the recorder saw the API client of the driver');
  assert.deepEqual(loaded.filter((u) => u.includes('/node_modules/@kubernetes/client-node/')), [], 'and not the API client library');
  assert.deepEqual(loaded.filter((u) => u.includes('/src/bench/')), [], 'nor a module of the bench');
});
