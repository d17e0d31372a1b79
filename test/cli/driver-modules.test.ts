// What a driver loads: its code as one file (the build's bundle), holding none of the bench's modules and not the API client library (its files are most of the package's, cost every driver start and some 50 MiB resident), with or without API access; no YAML parser without a kubeconfig.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { DriverHarness, LODE_CLI } from '../helpers/driver-harness.js';
import { ApiCluster } from '../helpers/api-cluster.js';

interface Loaded {
  /** The file: URLs node's ES module loader loaded. */
  esm: string[];
  /** Every CommonJS module the driver had required when it exited (the bundle requires only Node's own and the YAML parser). */
  cjs: string[];
}

/**
 * A preload that has node's module loader append each loaded URL to `esm.txt` in `dir`, and the
 * process write the files in require's cache to `cjs.txt` as it exits: the YAML parser is required
 * at run time, which the ES module hooks do not see.
 */
async function loadRecorder(dir: string): Promise<{ preload: string; read: () => Promise<Loaded> }> {
  const esm = path.join(dir, 'esm.txt');
  const cjs = path.join(dir, 'cjs.txt');
  const hooks = path.join(dir, 'hooks.mjs');
  await fs.writeFile(hooks, [
    "import { appendFileSync } from 'node:fs';",
    `export async function load(url, context, next) { appendFileSync(${JSON.stringify(esm)}, url + '\\n'); return next(url, context); }`,
  ].join('\n'));
  const preload = path.join(dir, 'register.mjs');
  await fs.writeFile(preload, [
    "import { register, createRequire } from 'node:module';",
    "import { writeFileSync } from 'node:fs';",
    `register(${JSON.stringify(pathToFileURL(hooks).href)});`,
    'const cache = createRequire(import.meta.url).cache;',
    `process.on('exit', () => writeFileSync(${JSON.stringify(cjs)}, Object.keys(cache).join('\\n')));`,
  ].join('\n'));
  const lines = async (f: string): Promise<string[]> => (await fs.readFile(f, 'utf8')).split('\n').filter((u) => u !== '');
  return { preload, read: async () => ({ esm: (await lines(esm)).filter((u) => u.startsWith('file:')), cjs: await lines(cjs) }) };
}

/** The modules the build put into the driver's bundle (scripts/bundle-driver.mjs writes its metafile at dist/). */
async function bundleInputs(): Promise<string[]> {
  const meta = JSON.parse(await fs.readFile(path.join(path.dirname(LODE_CLI), '..', '..', 'driver-bundle.meta.json'), 'utf8')) as { inputs: Record<string, unknown> };
  return Object.keys(meta.inputs);
}

// The command line (main.js and the version it prints), then the loader of the driver's bundle:
// the bundle itself is a script the loader compiles, no module of either loader.
const ONE_FILE = ['/src/cli/main.js', '/src/util/version.js', '/src/cli/driver-bundle-loader.js'];

function assertOneFile(esm: string[]): void {
  assert.deepEqual(esm.map((u) => ONE_FILE.find((f) => u.endsWith(f)) ?? u), ONE_FILE, 'the driver\'s code came as one script, the bundle, after the command line\'s own modules');
}

test('a driver without API access serves Probe from one bundled module holding neither the bench nor the API client library', async (t) => {
  const dir = await fs.mkdtemp(path.join('/tmp', 'lode-modules-'));
  t.after(() => fs.rm(dir, { recursive: true, force: true }));
  const recorder = await loadRecorder(dir);
  const h = await DriverHarness.start({ pools: [{ name: 'fast', size: '64Mi' }] }, { NODE_OPTIONS: `--import=${pathToFileURL(recorder.preload).href}` });
  t.after(() => h.cleanup());
  await h.stop();
  assert.match(h.log, /"msg":"driver code loaded","codeCache":"used"/, 'V8 took the build\'s code cache');
  const loaded = await recorder.read();
  assertOneFile(loaded.esm);
  assert.deepEqual(loaded.cjs.filter((f) => f.includes('driver-bundle')), [], 'nor was the bundle required');
  const inputs = await bundleInputs();
  assert.ok(inputs.includes('dist/src/driver/server.js'), `the bundle holds the driver's own modules (${inputs.length} inputs)`);
  assert.ok(inputs.some((u) => u.startsWith('node_modules/@grpc/grpc-js/')), 'and its gRPC library');
  assert.deepEqual(inputs.filter((u) => u.includes('/src/bench/')), [], 'no module of the bench');
  assert.deepEqual(inputs.filter((u) => u.includes('node_modules/@kubernetes/client-node/')), [], 'nor the API client library');
  // Only a kubeconfig is YAML; its parser is a quarter of the modules a driver would load at start.
  assert.deepEqual(inputs.filter((u) => u.includes('node_modules/yaml/')), [], 'nor the YAML parser');
  // The recorder's list was written (read() fails without it); with a kubeconfig it names the YAML parser (next test).
  assert.deepEqual(loaded.cjs.filter((f) => f.includes('/node_modules/')), [], 'no package was required at run time: no YAML parser without a kubeconfig');
});

test('a driver with API access reaches the API through its own client, not the API client library', async (t) => {
  const dir = await fs.mkdtemp(path.join('/tmp', 'lode-modules-api-'));
  t.after(() => fs.rm(dir, { recursive: true, force: true }));
  const api = new ApiCluster({ dirPrefix: 'lode-modules-api-' });
  api.store.create('Node', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-api' } });
  await api.start();
  t.after(() => api.stop());
  const recorder = await loadRecorder(dir);
  const h = await DriverHarness.start({ nodeId: 'node-api', pools: [{ name: 'fast', size: '64Mi' }], extraArgs: ['--kubeconfig', api.kubeconfig] }, { NODE_OPTIONS: `--import=${pathToFileURL(recorder.preload).href}` });
  t.after(() => h.cleanup());
  assert.ok(api.requests.includes('lode-driver get nodes'), `the driver read its Node at start (${api.requests.join(', ')})`);
  await h.stop();
  const loaded = await recorder.read();
  assertOneFile(loaded.esm);
  assert.ok((await bundleInputs()).includes('dist/src/kube/http-transport.js'), 'the bundle holds the API client of the driver');
  assert.ok(loaded.cjs.some((f) => f.includes('/node_modules/yaml/')), 'the kubeconfig was read with the YAML parser, required at run time');
  assert.deepEqual(loaded.cjs.filter((f) => f.includes('/node_modules/@kubernetes/client-node/')), [], 'and not the API client library');
  assert.deepEqual(loaded.esm.filter((u) => u.includes('/node_modules/')), [], 'nor any other package');
});
