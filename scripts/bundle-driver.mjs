// Part of `npm run build`: bundles the compiled driver command (dist/src/cli/driver-command.js and
// everything it imports, dependencies included) into one ES module, dist/src/cli/driver-bundle.js,
// which is what `lode driver` loads.
//
// Why: a driver start spent most of its time loading about 200 separate modules, not running them
// (docs/benchmarks.md#driver-start: 268 against 369 ms to ready here, and most in the test VM,
// whose CPU is emulated). Every node runs a driver, and every restart, test and bench node pays that.
//
// The bundle sits in dist/src/cli/, as deep as the compiled modules that find files from
// import.meta.url (src/util/version.ts: package.json; src/csi/proto.ts: proto/csi.proto;
// src/kube/kube-config.ts requires the YAML parser at run time, only to read a kubeconfig), so those
// resolve as they do unbundled. The metafile, dist/driver-bundle.meta.json, lists the modules
// inside, for the test that keeps the bench and the API client library out; it is outside
// dist/src/, which is all the image copies, since nothing reads it at run time.
import { build } from 'esbuild';
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const result = await build({
  absWorkingDir: root,
  entryPoints: ['dist/src/cli/driver-command.js'],
  outfile: 'dist/src/cli/driver-bundle.js',
  bundle: true,
  platform: 'node',
  format: 'esm',
  // package.json's "engines": the oldest Node.js the driver supports.
  target: 'node20',
  // The gRPC library and its kin are CommonJS; inside an ES module their require() of Node's own
  // modules needs a require function, which ES modules do not have.
  banner: { js: "import { createRequire as lodeBundleRequire } from 'node:module'; const require = lodeBundleRequire(import.meta.url);" },
  sourcemap: 'linked',
  metafile: true,
  logLevel: 'warning',
});
await writeFile(`${root}/dist/driver-bundle.meta.json`, JSON.stringify(result.metafile));
