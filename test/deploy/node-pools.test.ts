// The DaemonSet's env contract with `lode driver` (per-node pools from the mounted ConfigMap), and the shipped default pools.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs, readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { IDaemonSet } from 'kubernetes-models/apps/v1/DaemonSet';
import type { IContainer } from 'kubernetes-models/v1/Container';
import { parseDriverFlags } from '../../src/cli/driver-flags.js';
import { parsePoolSpec } from '../../src/pool/pool-spec.js';
import { renderSkip, renderKustomization, REPO_ROOT } from './render.js';

const skip = renderSkip();
const BASE = path.join(REPO_ROOT, 'deploy', 'base');

let cache: Promise<IContainer> | undefined;
function driverContainer(): Promise<IContainer> {
  cache ??= renderKustomization(BASE).then((objects) => {
    const ds = objects.find((o) => o.kind === 'DaemonSet') as unknown as IDaemonSet;
    const c = ds.spec?.template.spec?.containers.find((x) => x.name === 'lode');
    assert.ok(c);
    return c;
  });
  return cache;
}

test('the env the DaemonSet sets is what `lode driver` reads, pools included', { skip }, async (t) => {
  const c = await driverContainer();
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lode-pools-'));
  t.after(() => fs.rm(dir, { recursive: true, force: true }));
  const config = path.join(dir, 'config');
  const root = path.join(dir, 'root');
  await fs.mkdir(config);
  await fs.mkdir(root);
  await fs.writeFile(path.join(config, 'default'), `local=${root}/pools/local,default-size=1Gi\n`);

  // Kubernetes expands $(VAR) in env values from variables defined earlier in the list.
  const env: Record<string, string> = {};
  for (const e of c.env ?? []) {
    if (e.valueFrom?.fieldRef?.fieldPath === 'spec.nodeName') env[e.name] = 'worker-1';
    else if (e.value !== undefined) env[e.name] = e.value.replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (m, v: string) => env[v] ?? m);
  }
  // The driver reads the pools itself: the ConfigMap's mount and the host directory.
  assert.equal(env['LODE_POOL_CONFIG'], '/etc/lode/pools');
  assert.equal(env['LODE_POOL_ROOT'], '/var/lib/lode');
  assert.equal(env['LODE_POOLS'], undefined);
  env['LODE_POOL_CONFIG'] = config;
  env['LODE_POOL_ROOT'] = root;
  const flags = await parseDriverFlags([], env, '0.0.0-test');
  assert.notEqual(flags, 'help');
  if (flags === 'help') return;
  assert.equal(flags.config.nodeId, 'worker-1');
  assert.equal(flags.config.driverName, 'lode.csi.dev');
  assert.equal(flags.config.endpoint, 'unix:///csi/csi.sock');
  assert.deepEqual(flags.config.targetRoots, ['/var/lib/kubelet']);
  assert.equal(flags.config.metricsAddress, '127.0.0.1:9809');
  assert.deepEqual(flags.config.pools.map((p) => [p.name, p.dir, p.defaultVolumeBytes]), [['local', `${root}/pools/local`, 2 ** 30]]);
  assert.ok((await fs.stat(path.join(root, 'pools', 'local'))).isDirectory(), 'created on a fresh node');

  // A disk pool whose directory is missing (disk not mounted) stops the driver with its path.
  await fs.writeFile(path.join(config, 'default'), `fast=${root}/nvme/lode\n`);
  await assert.rejects(parseDriverFlags([], env, '0.0.0-test'), new RegExp(`${root}/nvme/lode does not exist`));
});

test('the shipped default pools parse with the driver\'s own parser, are created on a fresh node, and keep the node out of DiskPressure', () => {
  const lines = readFileSync(path.join(BASE, 'pools', 'default'), 'utf8').split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'));
  assert.ok(lines.length >= 1);
  for (const line of lines) {
    const pool = parsePoolSpec(line);
    assert.ok(pool.dir.startsWith('/var/lib/lode/pools/'), `${pool.name}: ${pool.dir} must be created on a fresh node`);
    // On the node's root filesystem: a reserve above kubelet's default hard eviction
    // thresholds there (nodefs.available<10%, imagefs.available<15% when images share it).
    assert.equal(pool.sizeBytes, undefined);
    assert.ok(pool.reserve !== undefined && 'percent' in pool.reserve && pool.reserve.percent > 15, `${pool.name}: reserve ${JSON.stringify(pool.reserve)}`);
    // Inline volumes bypass scheduling and quota: off unless an operator turns them on.
    assert.equal(pool.inlineMaxBytes, undefined);
  }
});
