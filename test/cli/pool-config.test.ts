// --pool-config and --pool-root: this node's pools from a mounted ConfigMap (key = node name, else "default") and where their directories may lie.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseDriverFlags, type DriverFlags } from '../../src/cli/driver-flags.js';

interface Sandbox {
  dir: string;
  config: string;
  root: string;
  /** Writes a ConfigMap key as kubelet lays one out: a symlink into the ..data directory. */
  key(name: string, text: string): Promise<void>;
  flags(nodeId: string, extra?: NodeJS.ProcessEnv): Promise<DriverFlags>;
}

async function sandbox(t: { after(fn: () => Promise<void>): void }): Promise<Sandbox> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lode-pool-config-'));
  t.after(() => fs.rm(dir, { recursive: true, force: true }));
  const config = path.join(dir, 'config');
  const root = path.join(dir, 'root');
  await fs.mkdir(path.join(config, '..2026_12_01_10_00_00.000000001'), { recursive: true });
  await fs.symlink('..2026_12_01_10_00_00.000000001', path.join(config, '..data'));
  await fs.mkdir(root);
  return {
    dir, config, root,
    key: async (name, text) => {
      await fs.writeFile(path.join(config, '..data', name), text);
      await fs.symlink(path.join('..data', name), path.join(config, name));
    },
    flags: async (nodeId, extra = {}) => {
      const f = await parseDriverFlags([], {
        LODE_ENDPOINT: `unix://${dir}/csi.sock`, LODE_NODE_ID: nodeId, LODE_POOL_CONFIG: config, LODE_POOL_ROOT: root, ...extra,
      }, '0.0.0-test');
      assert.notEqual(f, 'help');
      if (f === 'help') throw new Error('help');
      return f;
    },
  };
}

const poolsOf = (f: DriverFlags) => f.config.pools.map((p) => `${p.name}=${p.dir}`);

test('a node with its own key gets its pools, in order; comments, blank lines and indentation are ignored', async (t) => {
  const s = await sandbox(t);
  await s.key('default', `local=${s.root}/pools/local\n`);
  await fs.mkdir(path.join(s.root, 'nvme', 'lode'), { recursive: true });
  await s.key('worker-1.example.com', `# fast NVMe and a big disk\n\n  fast=${s.root}/nvme/lode,size=100Gi\nbulk=${s.root}/pools/bulk,size=2Ti,default-size=10Gi`);
  const f = await s.flags('worker-1.example.com');
  assert.deepEqual(poolsOf(f), [`fast=${s.root}/nvme/lode`, `bulk=${s.root}/pools/bulk`]);
  assert.equal(f.poolFile, path.join(s.config, 'worker-1.example.com'));
  assert.equal(f.config.pools[1]?.defaultVolumeBytes, 10 * 2 ** 30);
  await assert.rejects(fs.stat(path.join(s.root, 'pools', 'local')), { code: 'ENOENT' }, 'the default pool is not created on this node');
});

test('a node without a key of its own gets the default pools', async (t) => {
  const s = await sandbox(t);
  await s.key('default', `local=${s.root}/pools/local,default-size=1Gi,reserve=20%\n`);
  await s.key('worker-1', `fast=${s.root}/pools/nvme\n`);
  const f = await s.flags('worker-2');
  assert.deepEqual(poolsOf(f), [`local=${s.root}/pools/local`]);
  assert.equal(f.poolFile, path.join(s.config, 'default'));
  assert.deepEqual(f.config.pools[0]?.reserve, { percent: 20 });
});

test('no key for the node and no default: the driver refuses to start, naming both', async (t) => {
  const s = await sandbox(t);
  await s.key('worker-1', `fast=${s.root}/pools/nvme\n`);
  await assert.rejects(s.flags('worker-9'), /has no file "worker-9" \(this node\) and no "default"/);
  await s.key('default', '# nothing here\n\n');
  await assert.rejects(s.flags('worker-9'), /default lists no pools/);
});

test('pool directories under pools/ are created; others must exist, so an unmounted disk is not replaced by the root filesystem', async (t) => {
  const s = await sandbox(t);
  await s.key('default', `local=${s.root}/pools/local\nfast=${s.root}/nvme/lode\n`);
  await assert.rejects(s.flags('worker-1'), new RegExp(`${s.root}/nvme/lode does not exist`));
  assert.ok((await fs.stat(path.join(s.root, 'pools', 'local'))).isDirectory());
  await assert.rejects(fs.stat(path.join(s.root, 'nvme')), { code: 'ENOENT' }, 'a disk pool directory is never created');
  // Once the disk is mounted (here: the directory exists), the same list starts.
  await fs.mkdir(path.join(s.root, 'nvme', 'lode'), { recursive: true });
  assert.deepEqual(poolsOf(await s.flags('worker-1')), [`local=${s.root}/pools/local`, `fast=${s.root}/nvme/lode`]);
});

test('a pool outside the pool root is refused before anything is created, links included', async (t) => {
  const s = await sandbox(t);
  const outside = path.join(s.dir, 'outside');
  await fs.mkdir(outside);
  await fs.mkdir(path.join(s.root, 'pools'));
  await fs.symlink(outside, path.join(s.root, 'pools', 'link'));
  await fs.symlink(outside, path.join(s.root, 'disk'));
  for (const bad of ['/srv/lode/fast', `${s.root}/pools/../../escape`, `${s.root}`, `${s.root}x/fast`, `${s.root}/pools/link`, `${s.root}/disk`, `${s.root}/pools/link/deeper`]) {
    await fs.rm(path.join(s.config, 'default'), { force: true });
    await fs.rm(path.join(s.config, '..data', 'default'), { force: true });
    await s.key('default', `fast=${bad},size=1Gi\n`);
    await assert.rejects(s.flags('worker-1'), /must lie under|outside/, `accepted ${bad}`);
  }
  await assert.rejects(fs.stat(path.join(s.dir, 'escape')), { code: 'ENOENT' }, 'nothing created outside the root');
  assert.deepEqual(await fs.readdir(outside), [], 'nothing created through a link');
});

test('--pool-root applies to --pool as well; --pool and --pool-config together are refused; a bad line names its file', async (t) => {
  const s = await sandbox(t);
  await s.key('default', `local=${s.root}/pools/local\n`);
  await assert.rejects(s.flags('worker-1', { LODE_POOLS: `x=${s.root}/pools/x` }), /either with --pool .* or with --pool-config/);
  const viaPool = await s.flags('worker-1', { LODE_POOL_CONFIG: '', LODE_POOLS: `x=${s.root}/pools/x` });
  assert.deepEqual(poolsOf(viaPool), [`x=${s.root}/pools/x`]);
  assert.equal(viaPool.poolFile, undefined);
  await assert.rejects(s.flags('worker-1', { LODE_POOL_CONFIG: '', LODE_POOLS: `x=${s.dir}` }), /must lie under/);
  await s.key('worker-2', `fast=${s.root}/pools/fast,colour=blue\n`);
  await assert.rejects(s.flags('worker-2'), new RegExp(`${s.config}/worker-2: pool "fast": unknown option "colour"`));
});
