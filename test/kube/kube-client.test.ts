// The driver's API door against a real HTTP server: credentials checked at start, its own User-Agent, every request bounded.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { writeKubeconfig } from '../../src/bench/apiserver/kubeconfig.js';
import { ApiCluster, stubApiServer } from '../helpers/api-cluster.js';
import { connectKube } from '../../src/kube/kube-client.js';
import { KubeUnavailableError } from '../../src/kube/kube-errors.js';
import { parseDriverFlags } from '../../src/cli/driver-flags.js';
import { spawn } from 'node:child_process';
import { readdirSync, existsSync } from 'node:fs';
import { LODE_CLI } from '../helpers/driver-harness.js';

const api = new ApiCluster({ historyLimit: 20, dirPrefix: 'lode-kube-' });
const { store, dir } = api;
const seen = api.requests;
let benchConfig = '';


function kubeconfigFor(name: string, url: string): string {
  const file = path.join(dir, name);
  writeKubeconfig(file, url);
  return file;
}

before(async () => {
  await api.start();
  store.create('Node', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-1' } });
  benchConfig = api.kubeconfig;
});

after(async () => {
  await api.stop();
});

describe('API access of the driver', () => {
  it('checks the credentials with a GET of its own Node, sending its own User-Agent', async () => {
    const kube = await connectKube({ source: { kind: 'kubeconfig', path: benchConfig }, callTimeoutMs: 2_000 }, 'node-1', '9.9.9');
    assert.equal(kube.userAgent, 'lode-driver/9.9.9 (node-1)');
    assert.ok(seen.includes('lode-driver get nodes'), seen.join('\n'));
    const node = await kube.bounded('get node', (a) => a.core.readNode({ name: 'node-1' }));
    assert.equal(node.metadata?.name, 'node-1');
  });

  it('stops the start with a message naming the cause when the credentials are rejected or lack the permission', async () => {
    for (const [status, words] of [[401, /rejected the credentials \(401/], [403, /forbidden \(403\).*docs\/install.md, "Permissions"/]] as const) {
      const stub = await stubApiServer(status);
      try {
        await assert.rejects(connectKube({ source: { kind: 'kubeconfig', path: kubeconfigFor(`s${status}`, stub.url) }, callTimeoutMs: 1_000 }, 'node-1', '1'), words);
      } finally {
        await stub.close();
      }
    }
    await assert.rejects(connectKube({ source: { kind: 'kubeconfig', path: path.join(dir, 'missing') }, callTimeoutMs: 1_000 }, 'node-1', '1'), /cannot load API credentials from kubeconfig/);
  });

  it('starts through an API outage, and a request that gets no answer fails within its bound', async () => {
    const stub = await stubApiServer(0);
    try {
      const kube = await connectKube({ source: { kind: 'kubeconfig', path: kubeconfigFor('silent', stub.url) }, callTimeoutMs: 300 }, 'node-1', '1');
      const started = Date.now();
      await assert.rejects(kube.bounded('list pods', (a) => a.core.listNamespacedPod({ namespace: 'default' })), (err: unknown) => err instanceof KubeUnavailableError && /within 300 ms \(list pods\)/.test(err.message));
      assert.ok(Date.now() - started < 5_000, 'the bound holds, not the HTTP library\'s own timeout');
      // The request is cancelled, not left hanging: its connection closes (a hanging one kept a
      // stopping driver alive until the server gave up on it).
      const deadline = Date.now() + 10_000;
      while (stub.open() > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      assert.equal(stub.open(), 0, 'the unanswered request\'s connection is closed');
    } finally {
      await stub.close();
    }
  });
});

describe('lode driver with API access', () => {
  it('exits 1 on rejected credentials, saying so, before it opens a pool or its socket', async () => {
    const stub = await stubApiServer(401);
    const pool = mkdtempSync(path.join(dir, 'pool-'));
    const sock = path.join(dir, 'csi.sock');
    try {
      const child = spawn(process.execPath, [LODE_CLI, 'driver', '--endpoint', `unix://${sock}`, '--node-id', 'node-1', '--pool', `p=${pool}`, '--kubeconfig', kubeconfigFor('cli', stub.url)], { stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (c: Buffer) => { stderr += c.toString('utf8'); });
      const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
      assert.equal(code, 1, stderr);
      assert.match(stderr, /lode driver: get node node-1: the API server rejected the credentials \(401 Unauthorized\)/);
      assert.deepEqual(readdirSync(pool), [], 'the pool is untouched');
      assert.equal(existsSync(sock), false, 'no socket');
    } finally {
      await stub.close();
    }
  });
});

describe('API flags', () => {
  const base = ['--endpoint', 'unix:///tmp/x.sock', '--node-id', 'n1', '--pool', `p=${tmpdir()}`];
  it('leave the API off unless asked, and refuse contradictions and bad values', async () => {
    const off = await parseDriverFlags(base, {}, '1');
    assert.ok(off !== 'help' && off.config.kube === undefined);
    const on = await parseDriverFlags([...base, '--kubeconfig', '/etc/k.conf', '--api-timeout', '5'], {}, '1');
    assert.ok(on !== 'help');
    assert.deepEqual(on.config.kube, { source: { kind: 'kubeconfig', path: '/etc/k.conf' }, callTimeoutMs: 5_000 });
    const env = await parseDriverFlags(base, { LODE_IN_CLUSTER: 'true' }, '1');
    assert.ok(env !== 'help');
    assert.deepEqual(env.config.kube?.source, { kind: 'in-cluster' });
    await assert.rejects(parseDriverFlags([...base, '--in-cluster', '--kubeconfig', '/k'], {}, '1'), /not both/);
    await assert.rejects(parseDriverFlags([...base, '--kubeconfig', 'k.conf'], {}, '1'), /absolute path/);
    await assert.rejects(parseDriverFlags([...base, '--in-cluster', '--api-timeout', '0'], {}, '1'), /1 to 60/);
    await assert.rejects(parseDriverFlags([...base, '--api-timeout', '3'], {}, '1'), /needs --in-cluster or --kubeconfig/);
  });
});
