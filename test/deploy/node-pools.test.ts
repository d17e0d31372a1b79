// Runs the DaemonSet's start-up script with a fake `node`: per-node pool selection, and the env contract with `lode driver`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promises as fs, readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { IDaemonSet } from 'kubernetes-models/apps/v1/DaemonSet';
import type { IContainer } from 'kubernetes-models/v1/Container';
import { parseDriverFlags } from '../../src/cli/driver-flags.js';
import { parsePoolSpec } from '../../src/pool/pool-spec.js';
import { kubectlMissing, renderKustomization, REPO_ROOT } from './render.js';

const skip = kubectlMissing();
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

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

interface Sandbox {
  dir: string;
  config: string;
  root: string;
  run(nodeName: string, extraArgs?: string[]): Promise<Run>;
}

/** A config dir, a pool root and a fake `node` that prints LODE_POOLS and its arguments. */
async function sandbox(c: IContainer): Promise<Sandbox> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lode-pools-'));
  const config = path.join(dir, 'config');
  const root = path.join(dir, 'root');
  const bin = path.join(dir, 'bin');
  await fs.mkdir(config);
  await fs.mkdir(root);
  await fs.mkdir(bin);
  await fs.writeFile(path.join(bin, 'node'), '#!/bin/sh\nprintf "POOLS=%s\\n" "$LODE_POOLS"\nfor a in "$@"; do printf "ARG=%s\\n" "$a"; done\n', { mode: 0o755 });
  const command = c.command ?? [];
  assert.equal(command[0], '/bin/sh');
  assert.equal(command[1], '-c');
  const script = command[2] ?? '';
  return {
    dir, config, root,
    run: (nodeName, extraArgs = []) =>
      new Promise<Run>((resolve) => {
        execFile('/bin/sh', ['-c', script, command[3] ?? 'sh', ...extraArgs], {
          env: { PATH: `${bin}:/usr/bin:/bin`, NODE_NAME: nodeName, LODE_POOL_CONFIG: config, LODE_POOL_ROOT: root },
        }, (err, stdout, stderr) => {
          resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : -1, stdout, stderr });
        });
      }),
  };
}

function poolsOf(r: Run): string {
  const line = r.stdout.split('\n').find((l) => l.startsWith('POOLS='));
  assert.ok(line, `the driver was not started: ${r.stderr}`);
  return line.slice('POOLS='.length);
}

test('a node with its own key gets its pools, and `lode driver` is exec-ed with the extra args', { skip }, async (t) => {
  const s = await sandbox(await driverContainer());
  t.after(() => fs.rm(s.dir, { recursive: true, force: true }));
  await fs.writeFile(path.join(s.config, 'default'), `local=${s.root}/pools/local\n`);
  await fs.writeFile(path.join(s.config, 'worker-1.example.com'),
    `# fast NVMe and a big disk\n\n  fast=${s.root}/nvme/lode,size=100Gi\nbulk=${s.root}/pools/bulk,size=2Ti,default-size=10Gi`);
  const r = await s.run('worker-1.example.com', ['--log-level=debug']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(poolsOf(r), `fast=${s.root}/nvme/lode,size=100Gi;bulk=${s.root}/pools/bulk,size=2Ti,default-size=10Gi`);
  assert.deepEqual(r.stdout.split('\n').filter((l) => l.startsWith('ARG=')),
    ['ARG=/app/dist/src/cli/main.js', 'ARG=driver', 'ARG=--log-level=debug']);
  await assert.rejects(fs.stat(path.join(s.root, 'pools', 'local')), { code: 'ENOENT' }, 'the default pool is not created on this node');
});

test('pool directories under pools/ are created; others must exist, so an unmounted disk is not replaced by the root filesystem', { skip }, async (t) => {
  const s = await sandbox(await driverContainer());
  t.after(() => fs.rm(s.dir, { recursive: true, force: true }));
  await fs.writeFile(path.join(s.config, 'default'), `local=${s.root}/pools/local\nfast=${s.root}/nvme/lode\n`);
  const r = await s.run('worker-1');
  assert.equal(r.code, 0, r.stderr);
  assert.ok((await fs.stat(path.join(s.root, 'pools', 'local'))).isDirectory());
  await assert.rejects(fs.stat(path.join(s.root, 'nvme')), { code: 'ENOENT' }, 'a disk pool directory is never created');
  // The driver then refuses to start, naming the directory (checked against the real parser below).
});

test('a node without a key of its own gets the default pools', { skip }, async (t) => {
  const s = await sandbox(await driverContainer());
  t.after(() => fs.rm(s.dir, { recursive: true, force: true }));
  await fs.writeFile(path.join(s.config, 'default'), `local=${s.root}/pools/local,default-size=1Gi\n`);
  await fs.writeFile(path.join(s.config, 'worker-1'), `fast=${s.root}/pools/nvme\n`);
  const r = await s.run('worker-2');
  assert.equal(r.code, 0, r.stderr);
  assert.equal(poolsOf(r), `local=${s.root}/pools/local,default-size=1Gi`);
});

test('no key for the node and no default: the container fails with a message naming the ConfigMap', { skip }, async (t) => {
  const s = await sandbox(await driverContainer());
  t.after(() => fs.rm(s.dir, { recursive: true, force: true }));
  const r = await s.run('worker-9');
  assert.equal(r.code, 1);
  assert.match(r.stderr, /lode-pools has no key "worker-9" and no "default"/);
  assert.ok(!r.stdout.includes('POOLS='), 'the driver was not started');
});

test('a pool outside the mounted host directory is refused before the driver starts', { skip }, async (t) => {
  const s = await sandbox(await driverContainer());
  t.after(() => fs.rm(s.dir, { recursive: true, force: true }));
  for (const bad of ['/srv/lode/fast', `${s.root}/pools/../../escape`, `${s.root}`, `${s.root}x/fast`]) {
    await fs.writeFile(path.join(s.config, 'default'), `fast=${bad},size=1Gi\n`);
    const r = await s.run('worker-1');
    assert.equal(r.code, 1, `accepted ${bad}`);
    assert.match(r.stderr, /must lie under|must not contain/);
    assert.ok(!r.stdout.includes('POOLS='));
  }
  await assert.rejects(fs.stat(path.join(s.dir, 'escape')), { code: 'ENOENT' }, 'nothing created outside the root');
});

test('the env the DaemonSet sets is what `lode driver` reads', { skip }, async (t) => {
  const c = await driverContainer();
  const s = await sandbox(c);
  t.after(() => fs.rm(s.dir, { recursive: true, force: true }));
  await fs.writeFile(path.join(s.config, 'default'), `local=${s.root}/pools/local,default-size=1Gi\n`);
  const pools = poolsOf(await s.run('worker-1'));

  // Kubernetes expands $(VAR) in env values from variables defined earlier in the list.
  const env: Record<string, string> = {};
  for (const e of c.env ?? []) {
    if (e.valueFrom?.fieldRef?.fieldPath === 'spec.nodeName') env[e.name] = 'worker-1';
    else if (e.value !== undefined) env[e.name] = e.value.replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (m, v: string) => env[v] ?? m);
  }
  env['LODE_POOLS'] = pools;
  const flags = await parseDriverFlags([], env, '0.0.0-test');
  assert.notEqual(flags, 'help');
  if (flags === 'help') return;
  assert.equal(flags.config.nodeId, 'worker-1');
  assert.equal(flags.config.driverName, 'lode.csi.dev');
  assert.equal(flags.config.endpoint, 'unix:///csi/csi.sock');
  assert.deepEqual(flags.config.targetRoots, ['/var/lib/kubelet']);
  assert.equal(flags.config.metricsAddress, '127.0.0.1:9809');
  assert.deepEqual(flags.config.pools.map((p) => [p.name, p.dir, p.defaultVolumeBytes]), [['local', `${s.root}/pools/local`, 2 ** 30]]);

  // A disk pool whose directory is missing (disk not mounted) stops the driver with its path.
  await fs.writeFile(path.join(s.config, 'default'), `fast=${s.root}/nvme/lode\n`);
  env['LODE_POOLS'] = poolsOf(await s.run('worker-1'));
  await assert.rejects(parseDriverFlags([], env, '0.0.0-test'), new RegExp(`${s.root}/nvme/lode does not exist`));
});

test('the shipped default pools parse with the driver\'s own parser and are created on a fresh node', () => {
  const lines = readFileSync(path.join(BASE, 'pools', 'default'), 'utf8').split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'));
  assert.ok(lines.length >= 1);
  for (const line of lines) {
    const pool = parsePoolSpec(line);
    assert.ok(pool.dir.startsWith('/var/lib/lode/pools/'), `${pool.name}: ${pool.dir} must be created on a fresh node`);
  }
});
