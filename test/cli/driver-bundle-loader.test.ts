// The driver bundle's code cache: taken when it was made for this bundle under the driver's flags, and never offered for another bundle, even one of the same length (V8 checks only the length).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { copyDriverBuild } from '../helpers/driver-build-copy.js';
import { DRIVER_NODE_FLAGS } from '../../src/util/driver-node-flags.js';

/** A copy of the built loader, bundle and cache in a directory of its own, to spoil. */
function copyOfBuild(): { dir: string; bundle: string; cache: string; done: () => void } {
  const c = copyDriverBuild(true);
  return { dir: c.dir, bundle: c.bundle, cache: c.cache, done: c.remove };
}

/** Loads the bundle in a fresh Node.js (with `flags`): what became of the cache, and whether the driver command came out. */
function load(dir: string, flags: readonly string[] = DRIVER_NODE_FLAGS): string {
  const loader = pathToFileURL(path.join(dir, 'driver-bundle-loader.js')).href;
  const r = spawnSync(process.execPath, [...flags, '--input-type=module', '-e',
    `const { driver, codeCache } = (await import(${JSON.stringify(loader)})).loadDriverBundle(); console.log(codeCache, typeof driver.runDriverCommand);`], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.trim();
}

describe('the driver bundle\'s code cache', () => {
  it('is used as the build made it, and refused by V8 under other flags', (t) => {
    const b = copyOfBuild();
    t.after(b.done);
    assert.equal(load(b.dir), 'used function');
    assert.equal(load(b.dir, []), 'rejected function', 'V8 refuses a cache made under other flags; the bundle runs without it');
  });

  it('is not offered for a bundle it was not made from, even one of the same length', (t) => {
    const b = copyOfBuild();
    t.after(b.done);
    const text = readFileSync(b.bundle, 'utf8');
    const at = text.indexOf('driver code loaded');
    assert.ok(at > 0, 'the bundle holds the log message this test changes');
    const edited = `${text.slice(0, at)}driver code LOADED${text.slice(at + 'driver code loaded'.length)}`;
    assert.equal(Buffer.byteLength(edited), Buffer.byteLength(text));
    writeFileSync(b.bundle, edited);
    assert.equal(load(b.dir), 'stale function');
  });

  it('runs without one that is missing or cut short', (t) => {
    const b = copyOfBuild();
    t.after(b.done);
    truncateSync(b.cache, 32);
    assert.equal(load(b.dir), 'stale function', 'a digest with no data after it');
    unlinkSync(b.cache);
    assert.equal(load(b.dir), 'absent function');
  });
});
