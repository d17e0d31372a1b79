// The VM tests run from any checkout path: a clone of this checkout's HEAD in a temporary directory
// under /tmp (which the guest covers with its own tmpfs) builds and runs a VM guest file from there.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkPrerequisites, describeMissing, which } from './prerequisites.js';
import { STORAGE_TOOLS, underCi } from './host-suite.js';
import { CSI_TOOLS } from '../helpers/csi-tools.js';

/** This checkout (dist/test/vm/ is three levels down). */
const checkout = path.resolve(fileURLToPath(new URL('../../..', import.meta.url)));
/** The cheapest real guest file: XFS project quotas, some 10 to 40 s in the guest. */
const GUEST_FILE = 'dist/test/vm-guest/xfs-project-quota.test.js';

const pre = checkPrerequisites(STORAGE_TOOLS);
const missing = !pre.ok ? describeMissing(pre) : !which('git') ? 'git is missing (apt-get install git)' : undefined;
const skip = missing !== undefined && !underCi() ? missing : false;

function exec(cmd: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => { out += c; });
    child.stderr.setEncoding('utf8').on('data', (c: string) => { out += c; });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out }));
  });
}

async function ok(cmd: string, args: readonly string[], cwd: string, env?: NodeJS.ProcessEnv): Promise<string> {
  const r = await exec(cmd, args, cwd, env);
  assert.equal(r.code, 0, `${cmd} ${args.join(' ')} (in ${cwd}) exited ${r.code}:\n${r.out}`);
  return r.out;
}

test('a clone under /tmp builds and runs a VM guest file from there, the guest reading the clone', { skip }, async (t) => {
  if (missing !== undefined) assert.fail(`CI=true: ${missing}`);
  const head = (await ok('git', ['rev-parse', 'HEAD'], checkout)).trim();
  if ((await ok('git', ['status', '--porcelain'], checkout)).trim() !== '') {
    t.diagnostic(`the work tree has uncommitted changes or untracked files: the clone has committed HEAD (${head}) only`);
  }
  const root = mkdtempSync('/tmp/lode-clone-');
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const clone = path.join(root, 'lode');
  // HEAD fetched by name: a worktree's HEAD may be on no branch the clone would take.
  await ok('git', ['clone', '--quiet', '--no-checkout', checkout, clone], root);
  await ok('git', ['fetch', '--quiet', checkout, 'HEAD'], clone);
  await ok('git', ['checkout', '--quiet', '--detach', 'FETCH_HEAD'], clone);
  assert.equal((await ok('git', ['rev-parse', 'HEAD'], clone)).trim(), head, 'the clone holds the commit under test');
  assert.equal(existsSync(path.join(clone, 'dist')), false, 'the clone has no build of its own yet');

  // The packages this checkout has, not an install from the network; rmSync removes the link, not them.
  symlinkSync(path.join(checkout, 'node_modules'), path.join(clone, 'node_modules'));
  const env: NodeJS.ProcessEnv = { ...process.env, LODE_VM_PARALLEL: '1' };
  // Inherited, it would make the child talk to this runner's protocol instead of printing TAP.
  delete env.NODE_TEST_CONTEXT;
  // A clone here has no ../shared/tools/csi beside it; the guest file does not need them, but a
  // clone's tests find them only this way.
  if (env.LODE_CSI_TOOLS === undefined && existsSync(CSI_TOOLS)) env.LODE_CSI_TOOLS = CSI_TOOLS;
  await ok('npm', ['run', '--silent', 'build'], clone, env);
  assert.ok(existsSync(path.join(clone, GUEST_FILE)), `the clone's build made ${GUEST_FILE}`);

  const r = await exec(process.execPath, ['--test-reporter=tap', path.join(clone, 'dist/test/vm/run.js'), GUEST_FILE], clone, env);
  assert.equal(r.code, 0, `the guest file must pass when run from the clone:\n${r.out}`);
  assert.match(r.out, /^ok 1 - in the VM: dist\/test\/vm-guest\/xfs-project-quota\.test\.js$/m);
  assert.match(r.out, /^# pass [1-9]\d*$/m);
  assert.match(r.out, /^# fail 0$/m);
  // The file the guest ran is the clone's (no other copy has that path), reached through its own share.
  assert.ok(r.out.includes(`# ${path.join(clone, GUEST_FILE)} took `), `the run names the clone's file:\n${r.out}`);
  // Beside it, where this checkout lies under /tmp as well, the packages its node_modules links to.
  const shared = /^# shared on their own, hidden by the guest's \/tmp or \/run: (.*)$/m.exec(r.out)?.[1]?.split(', ') ?? [];
  assert.ok(shared.includes(clone), `the clone was shared to the guest:\n${r.out}`);
  const slowdown = /slowdown (\d+\.\d+) \(its speed loop took (\d+) ms/.exec(r.out);
  assert.ok(slowdown, `the VM measured its speed:\n${r.out}`);
  t.diagnostic(`the clone's VM: slowdown ${slowdown[1]}, speed loop ${slowdown[2]} ms`);
});
