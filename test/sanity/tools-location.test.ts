// Where the tests find the upstream kubernetes-csi tools: LODE_CSI_TOOLS (for a checkout that is not
// beside ../shared/tools/csi, such as a clone under /tmp) with ready binaries taken as they are, and a
// missing directory named with both ways to give it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const helpers = fileURLToPath(new URL('../helpers/csi-tools.js', import.meta.url));
const sanity = fileURLToPath(new URL('./csi-tools.js', import.meta.url));

/** What the helpers say in a fresh process with `tools` as LODE_CSI_TOOLS (they read it once, at load). */
function lookUp(tools: string): { dir: unknown; provisioner: unknown; sanity: unknown } {
  const script = `
    const h = await import(${JSON.stringify(helpers)});
    const s = await import(${JSON.stringify(sanity)});
    console.log(JSON.stringify({ dir: await h.csiToolsDir(), provisioner: await h.csiTool('csi-provisioner'), sanity: await s.csiSanity() }));`;
  const env: NodeJS.ProcessEnv = { ...process.env, LODE_CSI_TOOLS: tools };
  delete env.NODE_TEST_CONTEXT;
  return JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { env, encoding: 'utf8' })) as { dir: unknown; provisioner: unknown; sanity: unknown };
}

test('LODE_CSI_TOOLS naming a directory of ready binaries is where the tests take csi-provisioner and csi-sanity from', (t) => {
  const dir = mkdtempSync('/tmp/lode-test-tools-');
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  for (const name of ['csi-provisioner', 'csi-sanity']) {
    writeFileSync(path.join(dir, name), '#!/bin/sh\n');
    chmodSync(path.join(dir, name), 0o755);
  }
  const got = lookUp(dir);
  assert.equal(got.dir, dir);
  assert.equal(got.provisioner, path.join(dir, 'csi-provisioner'));
  assert.equal(got.sanity, path.join(dir, 'csi-sanity'));
});

test('LODE_CSI_TOOLS naming nothing usable: every lookup says which directory and how to give the tools', (t) => {
  const dir = mkdtempSync('/tmp/lode-test-tools-');
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const got = lookUp(path.join(dir, 'none'));
  for (const [what, r] of Object.entries(got)) {
    const missing = (r as { missing?: string }).missing ?? '';
    assert.ok(missing.includes(path.join(dir, 'none')), `${what}: ${JSON.stringify(r)}`);
    assert.match(missing, /set LODE_CSI_TOOLS to them, or to a directory of ready binaries/, what);
  }
});
