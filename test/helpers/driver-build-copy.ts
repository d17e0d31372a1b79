// A copy of the build's `lode` command and driver bundle in a directory of its own: to start a driver without the bundle's code cache, or to spoil the cache.
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { LODE_CLI } from './driver-harness.js';

/** What `lode driver` reads of the build (src/cli/main.ts, src/cli/driver-bundle-loader.ts), below dist/src/. */
const RUN_FILES = ['cli/main.js', 'util/version.js', 'cli/driver-bundle-loader.js', 'cli/driver-bundle.cjs'];
const CACHE_FILE = 'cli/driver-bundle.cjs.v8cache';

export interface DriverBuildCopy {
  /** The copy's main.js, for DriverHarness's `cli`. */
  cli: string;
  /** The directory of the loader, the bundle and (if copied) the cache. */
  dir: string;
  bundle: string;
  cache: string;
  remove: () => void;
}

/** Copies the files a driver start reads, the code cache only when `withCache`. */
export function copyDriverBuild(withCache: boolean): DriverBuildCopy {
  const built = path.dirname(path.dirname(LODE_CLI));
  const root = mkdtempSync(path.join(os.tmpdir(), 'lode-build-copy-'));
  for (const f of [...RUN_FILES, ...(withCache ? [CACHE_FILE] : [])]) {
    mkdirSync(path.dirname(path.join(root, f)), { recursive: true });
    copyFileSync(path.join(built, f), path.join(root, f));
  }
  const dir = path.join(root, 'cli');
  return { cli: path.join(dir, 'main.js'), dir, bundle: path.join(dir, 'driver-bundle.cjs'), cache: path.join(root, CACHE_FILE), remove: () => rmSync(root, { recursive: true, force: true }) };
}
