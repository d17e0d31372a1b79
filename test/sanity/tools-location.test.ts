// Where the tests find the upstream kubernetes-csi tools: LODE_CSI_TOOLS (for a checkout that is not
// beside ../shared/tools/csi, such as a clone under /tmp) with ready binaries taken as they are, and a
// missing directory named with both ways to give it; and how a clone made elsewhere finds the tools of
// the checkout it was cloned from (scripts/csi-tools.sh, sourced by every npm script's set-up).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
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

const toolsScript = fileURLToPath(new URL('../../../scripts/csi-tools.sh', import.meta.url));

/** LODE_CSI_TOOLS after csi-tools.sh is sourced at `checkout`'s root, with `env` (and no LODE_CSI_TOOLS unless given). */
function sourced(checkout: string, given?: string): string {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.LODE_CSI_TOOLS;
  if (given !== undefined) env.LODE_CSI_TOOLS = given;
  return execFileSync('bash', ['-c', 'set -eu; source scripts/csi-tools.sh 2>/dev/null; printf %s "${LODE_CSI_TOOLS:-}"'], { cwd: checkout, env, encoding: 'utf8' });
}

test('a clone made elsewhere takes the tools beside the local checkout it was cloned from; given ones, or none to find, stay as they are', (t) => {
  const root = realpathSync(mkdtempSync('/tmp/lode-test-tools-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const git = (cwd: string, ...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd, stdio: 'ignore' });
  // The workplace: a checkout with the packed tools beside it, as ../shared/tools/csi.
  const checkout = path.join(root, 'work', 'main');
  const tools = path.join(root, 'work', 'shared', 'tools', 'csi');
  mkdirSync(path.join(checkout, 'scripts'), { recursive: true });
  mkdirSync(tools, { recursive: true });
  copyFileSync(toolsScript, path.join(checkout, 'scripts', 'csi-tools.sh'));
  git(checkout, 'init', '-q');
  git(checkout, 'add', '.');
  git(checkout, 'commit', '-q', '-m', 'x');
  // A clone of it elsewhere, with nothing beside it.
  const clone = path.join(root, 'elsewhere', 'lode');
  mkdirSync(path.dirname(clone));
  git(root, 'clone', '-q', checkout, clone);

  assert.equal(sourced(clone), tools, 'the clone finds the tools beside its origin');
  assert.equal(sourced(clone, '/given/tools'), '/given/tools', 'LODE_CSI_TOOLS given is kept');
  assert.equal(sourced(checkout), '', 'a checkout with the tools beside it needs no variable');
  rmSync(path.join(root, 'work', 'shared'), { recursive: true });
  assert.equal(sourced(clone), '', 'an origin without tools beside it gives none');
});
