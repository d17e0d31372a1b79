// Part of `npm run build`: bundles the compiled driver command (dist/src/cli/driver-command.js and
// everything it imports, dependencies included) into one CommonJS script,
// dist/src/cli/driver-bundle.cjs, then makes V8's code cache for it beside it
// (dist/src/cli/driver-bundle.cjs.v8cache). `lode driver` loads both
// (src/cli/driver-bundle-loader.ts).
//
// Why: a driver start spent most of its time loading about 200 separate modules, not running them
// (docs/benchmarks.md#driver-start), and then compiling the bundle. Every node runs a driver, and
// every restart, test and bench node pays that. A script, not an ES module: Node.js 20 takes a
// code cache only for scripts.
//
// The bundle sits in dist/src/cli/, as deep as the compiled modules that find files from
// import.meta.url (src/util/version.ts: package.json; src/kube/kube-config.ts requires the YAML
// parser at run time, only to read a kubeconfig), so those resolve as they do unbundled: the
// loader passes the bundle's own URL for import.meta.url. The metafile,
// dist/driver-bundle.meta.json, lists the modules inside, for the test that keeps the bench and
// the API client library out; it is outside dist/src/, which is all the image copies, since
// nothing reads it at run time.
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { rm, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const result = await build({
  absWorkingDir: root,
  entryPoints: ['dist/src/cli/driver-command.js'],
  outfile: 'dist/src/cli/driver-bundle.cjs',
  bundle: true,
  platform: 'node',
  format: 'cjs',
  // package.json's "engines": the oldest Node.js the driver supports.
  target: 'node20',
  // A script has no import.meta: the loader passes the bundle's URL under this name.
  define: { 'import.meta.url': 'lodeBundleUrl' },
  sourcemap: 'linked',
  metafile: true,
  logLevel: 'warning',
});
await writeFile(`${root}/dist/driver-bundle.meta.json`, JSON.stringify(result.metafile));
// The ES module bundle of earlier builds: nothing loads it any more.
await rm(`${root}/dist/src/cli/driver-bundle.js`, { force: true });
await rm(`${root}/dist/src/cli/driver-bundle.js.map`, { force: true });

// The code cache, made under the flags every driver runs with (the image's NODE_OPTIONS, the
// tests' and benchmarks' command lines): V8 refuses a cache made under other flags, and by
// another Node.js. The image's build stage runs this with the image's own Node.js.
const { DRIVER_NODE_FLAGS } = await import(new URL('../dist/src/util/driver-node-flags.js', import.meta.url).href);
const loader = new URL('../dist/src/cli/driver-bundle-loader.js', import.meta.url).href;
execFileSync(process.execPath, [...DRIVER_NODE_FLAGS, '--input-type=module', '-e', `(await import(${JSON.stringify(loader)})).makeCodeCache();`], { stdio: 'inherit' });
