// The flags of pool profiles and template capacity, and the --pool-config directory as a profile source: which entry applies, what a record of opened pools gives back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseDriverFlags } from '../../src/cli/driver-flags.js';
import { ConfigDirProfiles, OPENED_POOLS_FILE } from '../../src/cli/profile-pools.js';
import { parsePoolSpec } from '../../src/pool/pool-spec.js';

async function sandbox(t: { after: (fn: () => Promise<void>) => void }): Promise<{ config: string; root: string }> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lode-profile-flags-'));
  t.after(() => fs.rm(dir, { recursive: true, force: true }));
  const config = path.join(dir, 'config');
  const root = path.join(dir, 'root');
  await fs.mkdir(config);
  await fs.mkdir(root);
  return { config, root };
}

test('profile and template capacity flags: on with --pool-config and API access, refused without what they need', async (t) => {
  const { config, root } = await sandbox(t);
  await fs.writeFile(path.join(config, 'profile.m-small'), `fast=${root}/pools/fast,size=64Mi\n`);
  const base = ['--endpoint', 'unix:///tmp/x.sock', '--node-id', 'node-9', '--pool-config', config, '--pool-root', root];
  const on = await parseDriverFlags([...base, '--kubeconfig', '/k'], {}, '1');
  assert.ok(on !== 'help');
  assert.deepEqual(on.config.pools, [], 'no entry of its own and no default: the profile is chosen at start');
  assert.equal(on.config.poolProfiles?.labelKey, 'node.kubernetes.io/instance-type');
  assert.equal(on.config.templateCapacity?.periodMs, 60_000);
  assert.equal(on.config.templateCapacity?.namespace, 'lode-system');
  const env = await parseDriverFlags([...base, '--in-cluster'], { LODE_PROFILE_LABEL: 'example.com/pool-profile', LODE_TEMPLATE_CAPACITY: 'off' }, '1');
  assert.ok(env !== 'help');
  assert.equal(env.config.poolProfiles?.labelKey, 'example.com/pool-profile');
  assert.equal(env.config.templateCapacity, undefined);
  // Without profile entries (the base's own default entry only) it stays off unless asked for.
  const { config: plain } = await sandbox(t);
  await fs.writeFile(path.join(plain, 'default'), `local=${root}/pools/local\n`);
  const noProfiles = await parseDriverFlags(['--endpoint', 'unix:///tmp/x.sock', '--node-id', 'node-9', '--pool-config', plain, '--pool-root', root, '--in-cluster'], {}, '1');
  assert.ok(noProfiles !== 'help');
  assert.ok(noProfiles.config.poolProfiles !== undefined, 'profiles are still followed: one may be added');
  assert.equal(noProfiles.config.templateCapacity, undefined);
  const asked = await parseDriverFlags(['--endpoint', 'unix:///tmp/x.sock', '--node-id', 'node-9', '--pool-config', plain, '--pool-root', root, '--in-cluster', '--template-capacity', 'on'], {}, '1');
  assert.ok(asked !== 'help' && asked.config.templateCapacity !== undefined);
  const period = await parseDriverFlags([...base, '--in-cluster', '--template-capacity-period', '0.5', '--namespace', 'storage'], {}, '1');
  assert.ok(period !== 'help');
  assert.deepEqual([period.config.templateCapacity?.periodMs, period.config.templateCapacity?.namespace], [500, 'storage']);

  // Without API access a profile cannot be picked: the node needs an entry, as before.
  await assert.rejects(parseDriverFlags(base, {}, '1'), /has no file "node-9" \(this node\) and no "default"/);
  await assert.rejects(parseDriverFlags([...base, '--profile-label', 'x'], {}, '1'), /--profile-label needs --pool-config and API access/);
  await assert.rejects(parseDriverFlags(['--endpoint', 'unix:///tmp/x.sock', '--node-id', 'n', '--pool', `p=${root}`, '--in-cluster', '--profile-label', 'x'], {}, '1'), /--profile-label needs --pool-config/);
  await assert.rejects(parseDriverFlags([...base, '--in-cluster', '--profile-label', 'bad key/x/y'], {}, '1'), /--profile-label "bad key\/x\/y" is not a label key/);
  await assert.rejects(parseDriverFlags([...base, '--in-cluster', '--template-capacity', 'yes'], {}, '1'), /--template-capacity "yes" must be on or off/);
  await assert.rejects(parseDriverFlags(['--endpoint', 'unix:///tmp/x.sock', '--node-id', 'n', '--pool', `p=${root}`, '--in-cluster', '--template-capacity', 'on'], {}, '1'), /--template-capacity on needs --pool-config/);
  await assert.rejects(parseDriverFlags([...base, '--in-cluster', '--template-capacity-period', '0'], {}, '1'), /--template-capacity-period "0"/);
});

test('the directory as a profile source: the node\'s entry, then its profile, then default; none is undefined; a bad profile names its file', async (t) => {
  const { config, root } = await sandbox(t);
  const source = new ConfigDirProfiles(config, 'worker-1', 'node.kubernetes.io/instance-type', root);
  assert.equal(await source.choose('m-small'), undefined, 'no entry applies');
  await fs.writeFile(path.join(config, 'default'), `local=${root}/pools/local\n`);
  await fs.writeFile(path.join(config, 'profile.m-small'), `fast=${root}/pools/fast,size=64Mi\n`);
  assert.equal((await source.choose('m-small'))?.entry, 'profile.m-small');
  assert.equal((await source.choose('m-large'))?.entry, 'default');
  assert.equal((await source.choose(undefined))?.entry, 'default');
  assert.ok((await fs.stat(path.join(root, 'pools', 'fast'))).isDirectory(), 'the chosen pool\'s directory is made under the root');
  await fs.writeFile(path.join(config, 'worker-1'), `own=${root}/pools/own\n`);
  assert.equal((await source.choose('m-small'))?.entry, 'worker-1', 'the node\'s own entry wins over its profile');
  assert.deepEqual([...(await source.profiles()).keys()], ['m-small']);
  await fs.writeFile(path.join(config, 'profile.bad'), 'fast=relative/dir\n');
  await assert.rejects(source.profiles(), /profile\.bad: pool "fast": directory "relative\/dir" must be an absolute path/);
});

test('the record of opened pools: given back as written, ignored when unreadable, absent without --pool-root', async (t) => {
  const { config, root } = await sandbox(t);
  const source = new ConfigDirProfiles(config, 'worker-1', 'l', root);
  assert.equal(await source.lastOpened(), undefined);
  const pools = [parsePoolSpec(`fast=${root}/pools/fast,size=64Mi,max-volume-size=8Mi`), parsePoolSpec(`big=${root}/big,reserve=10%`)];
  await source.recordOpened(pools);
  assert.deepEqual(await source.lastOpened(), pools);
  await fs.writeFile(path.join(root, OPENED_POOLS_FILE), '[{"name": "x"}]');
  assert.equal(await source.lastOpened(), undefined, 'a record that is not pools is ignored, not trusted');
  const rootless = new ConfigDirProfiles(config, 'worker-1', 'l', undefined);
  await rootless.recordOpened(pools);
  assert.equal(await rootless.lastOpened(), undefined);
});
