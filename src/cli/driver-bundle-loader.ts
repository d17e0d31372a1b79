// Loads the driver's one-file bundle as a compiled script, with the V8 code cache the build made beside it, so a driver start compiles little.
import { createHash } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script } from 'node:vm';

/**
 * The build's bundle (scripts/bundle-driver.mjs): CommonJS, so that it can be compiled as a
 * script with a code cache, which Node.js 20 offers only for scripts (vm.Script's cachedData).
 */
const BUNDLE = new URL('./driver-bundle.cjs', import.meta.url);
const BUNDLE_PATH = fileURLToPath(BUNDLE);
/** V8's code cache for the bundle, made by the build: the bundle's SHA-256, then V8's data. */
const CACHE_PATH = fileURLToPath(new URL('./driver-bundle.cjs.v8cache', import.meta.url));
const DIGEST_BYTES = 32;

/**
 * What became of the code cache at a start, for the start's log:
 * - used: V8 took it;
 * - rejected: V8 refused it, as it does when this Node.js or its V8 flags are not the ones the
 *   build made it with (NODE_OPTIONS must hold DRIVER_NODE_FLAGS);
 * - stale: it was made for another bundle, so it was not offered to V8 at all;
 * - absent: there is none.
 * Without it a start compiles the whole bundle again: correct, only slower.
 */
export type CodeCacheUse = 'used' | 'rejected' | 'stale' | 'absent';

type DriverModule = typeof import('./driver-command.js');

/**
 * The bundle's text inside the function CommonJS modules run in. The wrapper is on the bundle's
 * first line, so stack traces keep the bundle's line numbers. `lodeBundleUrl` stands for the
 * bundle's import.meta.url (the modules find package.json and the YAML parser from it).
 */
function wrap(source: string): string {
  return `(function (exports, require, module, __filename, __dirname, lodeBundleUrl) {${source}\n})`;
}

function compile(): { script: Script; source: Buffer; codeCache: CodeCacheUse } {
  const source = readFileSync(BUNDLE_PATH);
  let cache: Buffer | undefined;
  try {
    cache = readFileSync(CACHE_PATH);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  // V8 checks a cache against the source's length, not its content: a cache of another bundle of
  // the same length would run that bundle's code. The digest is what ties the cache to this text.
  const fits = cache !== undefined && cache.length > DIGEST_BYTES && cache.subarray(0, DIGEST_BYTES).equals(digest(source));
  const script = new Script(wrap(source.toString('utf8')), {
    filename: BUNDLE_PATH,
    ...(fits ? { cachedData: cache!.subarray(DIGEST_BYTES) } : {}),
  });
  const codeCache: CodeCacheUse = cache === undefined ? 'absent' : !fits ? 'stale' : script.cachedDataRejected === true ? 'rejected' : 'used';
  return { script, source, codeCache };
}

function digest(source: Buffer): Buffer {
  return createHash('sha256').update(source).digest();
}

/** Runs the compiled bundle's top level and answers its exports. */
function evaluate(script: Script): DriverModule {
  const module = { exports: {} as DriverModule };
  const run = script.runInThisContext() as (exports: object, require: NodeJS.Require, module: object, filename: string, dirname: string, url: string) => void;
  run(module.exports, createRequire(BUNDLE), module, BUNDLE_PATH, path.dirname(BUNDLE_PATH), BUNDLE.href);
  return module.exports;
}

/** The driver command from the bundle, and what became of the code cache. */
export function loadDriverBundle(): { driver: DriverModule; codeCache: CodeCacheUse } {
  const { script, codeCache } = compile();
  return { driver: evaluate(script), codeCache };
}

/**
 * The build's last step: compiles the bundle, runs its top level (every module's body, so the
 * functions that run at every start are compiled too) and writes V8's code cache beside it.
 * Run under the driver's own Node.js flags (DRIVER_NODE_FLAGS), or V8 refuses the cache at start.
 */
export function makeCodeCache(): void {
  const { script, source } = compile();
  evaluate(script);
  const temp = `${CACHE_PATH}.tmp`;
  writeFileSync(temp, Buffer.concat([digest(source), script.createCachedData()]));
  renameSync(temp, CACHE_PATH);
}
