// A real bench run with --api and --hold, driven by @kubernetes/client-node (and kubectl where installed): list, watch, create, patch, delete, errors, then Ctrl-C leaves nothing.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmdirSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ApiException, CoreV1Api, KubeConfig, PatchStrategy, Watch, setHeaderOptions, type V1Pod } from '@kubernetes/client-node';
import { loopsUnder, mountsUnder } from '../../../src/bench/nodes/sweep.js';
import { needsRoot } from '../run-helpers.js';
import { findKubectl } from '../../helpers/kubectl.js';
import { kubectlSkip } from './kubectl-runner.js';

const MAIN = fileURLToPath(new URL('../../../src/cli/main.js', import.meta.url));
const SCENARIO = fileURLToPath(new URL('../../../../test/bench/fixtures/api/scenario.yaml', import.meta.url));
const kubectl = findKubectl();

async function status(p: Promise<unknown>): Promise<number> {
  try {
    await p;
    return 200;
  } catch (err) {
    if (err instanceof ApiException) return err.code;
    throw err;
  }
}

describe('lode bench --api with a client attached', { skip: needsRoot }, () => {
  let root = '';
  let child: ChildProcess;
  let stdout = '';
  let core: CoreV1Api;
  let kc: KubeConfig;
  let kubeconfig = '';
  let exited: Promise<number | null>;

  before(async () => {
    root = mkdtempSync('/tmp/lode-bench-api-');
    child = spawn(process.execPath, [MAIN, 'bench', SCENARIO, '--api', '127.0.0.1:0', '--hold', '--work-dir', root], { stdio: ['ignore', 'pipe', 'pipe'] });
    exited = new Promise((resolve) => child.on('exit', (c) => resolve(c)));
    let stderr = '';
    await new Promise<void>((resolve, reject) => {
      const check = (): void => { if (stderr.includes('holding the cluster')) resolve(); };
      child.stdout!.on('data', (d: Buffer) => { stdout += d.toString(); });
      child.stderr!.on('data', (d: Buffer) => { stderr += d.toString(); check(); });
      child.on('exit', (c) => reject(new Error(`bench exited early (${c}): ${stderr}`)));
    });
    kubeconfig = /kubeconfig (\S+) \(export/.exec(stdout)?.[1] ?? '';
    assert.ok(existsSync(kubeconfig), `kubeconfig printed at start and written: ${kubeconfig}`);
    kc = new KubeConfig();
    kc.loadFromFile(kubeconfig);
    core = kc.makeApiClient(CoreV1Api);
  });

  after(async () => {
    if (child.exitCode === null) child.kill('SIGINT');
    await exited;
    // After a failed case too: the run removed what it made, so only an empty directory can be left.
    if (existsSync(root) && readdirSync(root).length === 0) rmdirSync(root);
  });

  it('lists what the scenario made', async () => {
    const pods = await core.listNamespacedPod({ namespace: 'default' });
    assert.deepEqual(pods.items.map((p) => `${p.metadata?.name} ${p.status?.phase}`), ['first Running']);
    assert.ok(Number(pods.metadata?.resourceVersion) > 0);
    const pvs = await core.listPersistentVolume();
    assert.equal(pvs.items.length, 1);
    const onNode = await core.listPodForAllNamespaces({ fieldSelector: 'spec.nodeName=api-node,status.phase=Running' });
    assert.equal(onNode.items.length, 1);
    const ns = await core.listNamespace();
    assert.ok(ns.items.some((n) => n.metadata?.name === 'lode-system' && n.status?.phase === 'Active'), 'the namespace the capacity objects live in is listed');
  });

  it('creates a claim and a pod that the bench provisions and runs, seen through a watch', async () => {
    const list = await core.listNamespacedPod({ namespace: 'default' });
    const running = new Promise<V1Pod>((resolve, reject) => {
      void new Watch(kc).watch('/api/v1/namespaces/default/pods', { resourceVersion: list.metadata?.resourceVersion }, (type, obj: V1Pod) => {
        if (obj.metadata?.name === 'second' && type === 'MODIFIED' && obj.status?.phase === 'Running') resolve(obj);
      }, (err: unknown) => { if (err) reject(err); });
    });
    await core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: { metadata: { name: 'second' }, spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'lode-local', resources: { requests: { storage: '16Mi' } } } } });
    await core.createNamespacedPod({ namespace: 'default', body: { metadata: { name: 'second', labels: { app: 'second' } }, spec: { containers: [{ name: 'c', image: 'busybox' }], volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'second' } }] } } });
    const pod = await running;
    assert.equal(pod.spec?.nodeName, 'api-node');
    const claim = await core.readNamespacedPersistentVolumeClaim({ name: 'second', namespace: 'default' });
    assert.equal(claim.status?.phase, 'Bound');
    assert.match(claim.spec?.volumeName ?? '', /^pvc-/);
  });

  it('patches with each patch type', async () => {
    const merge = await core.patchNamespacedPod({ name: 'second', namespace: 'default', body: { metadata: { labels: { merged: 'yes' } } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    assert.equal(merge.metadata?.labels?.merged, 'yes');
    const json = await core.patchNamespacedPod({ name: 'second', namespace: 'default', body: [{ op: 'add', path: '/metadata/annotations', value: { note: 'json' } }] }, setHeaderOptions('Content-Type', PatchStrategy.JsonPatch));
    assert.equal(json.metadata?.annotations?.note, 'json');
    const smp = await core.patchNamespacedPod({ name: 'second', namespace: 'default', body: { spec: { containers: [{ name: 'c', image: 'busybox:2' }] } } }, setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch));
    assert.deepEqual(smp.spec?.containers.map((c) => `${c.name}=${c.image}`), ['c=busybox:2']);
    assert.equal(smp.status?.phase, 'Running', 'a patch of the pod keeps the status the kubelet wrote');
  });

  it('answers 404, 409 and 422 as the API server does', async () => {
    assert.equal(await status(core.readNamespacedPod({ name: 'nope', namespace: 'default' })), 404);
    assert.equal(await status(core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: { metadata: { name: 'second' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Mi' } } } } })), 409);
    const stale = await core.readNamespacedPod({ name: 'first', namespace: 'default' });
    await core.patchNamespacedPod({ name: 'first', namespace: 'default', body: { metadata: { labels: { touched: 'now' } } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    assert.equal(await status(core.replaceNamespacedPod({ name: 'first', namespace: 'default', body: stale })), 409, 'a stale resourceVersion loses');
    assert.equal(await status(core.createNamespacedPod({ namespace: 'default', body: { metadata: {}, spec: { containers: [] } } })), 422);
  });

  it('deletes a running pod gracefully through its kubelet, and its claim', async () => {
    const gone = new Promise<void>((resolve, reject) => {
      void new Watch(kc).watch('/api/v1/namespaces/default/pods', { fieldSelector: 'metadata.name=second' }, (type) => { if (type === 'DELETED') resolve(); }, (err: unknown) => { if (err) reject(err); });
    });
    const deleted = await core.deleteNamespacedPod({ name: 'second', namespace: 'default' });
    assert.equal(deleted.metadata?.name, 'second');
    await gone;
    assert.equal(await status(core.readNamespacedPod({ name: 'second', namespace: 'default' })), 404);
    await core.deleteNamespacedPersistentVolumeClaim({ name: 'second', namespace: 'default' });
  });

  it('works for kubectl get -o wide, describe, get -w, apply and delete', { skip: kubectlSkip() }, async () => {
    const home = mkdtempSync('/tmp/lode-bench-api-home-');
    try {
      const env = { ...process.env, HOME: home, KUBECONFIG: kubeconfig };
      const describe = spawnSync(kubectl!, ['describe', 'pod', 'first'], { encoding: 'utf8', env });
      assert.equal(describe.status, 0, describe.stderr);
      assert.match(describe.stdout, /Status:\s+Running/);
      assert.match(describe.stdout, /ClaimName:\s+first/);
      // get -w: the watch prints the object a later apply creates.
      const watcher = spawn(kubectl!, ['get', 'configmaps', '-w'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let watched = '';
      const sawApplied = new Promise<void>((resolve) => {
        watcher.stdout.on('data', (d: Buffer) => { watched += d.toString(); if (watched.includes('applied')) resolve(); });
      });
      const get = spawnSync(kubectl!, ['get', 'pods', '-A', '-o', 'wide'], { encoding: 'utf8', env });
      assert.equal(get.status, 0, get.stderr);
      assert.match(get.stdout, /default\s+first\b/);
      const apply = spawnSync(kubectl!, ['apply', '-f', '-'], { encoding: 'utf8', env, input: 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: applied}\ndata: {a: "1"}\n' });
      assert.equal(apply.status, 0, apply.stderr);
      const again = spawnSync(kubectl!, ['apply', '-f', '-'], { encoding: 'utf8', env, input: 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: applied}\ndata: {a: "2"}\n' });
      assert.equal(again.status, 0, again.stderr);
      assert.match(again.stdout, /configmap\/applied configured/);
      await sawApplied;
      watcher.kill('SIGTERM');
      assert.equal(watched.match(/^NAME\s/gm)?.length, 1, 'the watch printed its header once, then rows');
      const del = spawnSync(kubectl!, ['delete', 'configmap', 'applied'], { encoding: 'utf8', env });
      assert.equal(del.status, 0, del.stderr);
      assert.match(del.stdout, /configmap "applied" deleted/);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  it('logs each client write and, on Ctrl-C, ends the hold and leaves nothing behind', async () => {
    assert.match(stdout, /ApiWrite\s+pod\/second\s+api\/\S+\s+create pods default\/second/);
    child.kill('SIGINT');
    assert.equal(await exited, 0, 'ending a hold is the end of a run, not an interruption');
    assert.deepEqual(await mountsUnder(root), []);
    assert.deepEqual(await loopsUnder(root), []);
    assert.equal(existsSync(kubeconfig), false, 'the kubeconfig it wrote is removed');
    assert.deepEqual(readdirSync(root), []);
    rmdirSync(root);
  });
});

describe('lode bench --api on an address beyond loopback', { skip: needsRoot }, () => {
  it('refuses it before anything starts, saying why', () => {
    const r = spawnSync(process.execPath, [MAIN, 'bench', SCENARIO, '--api', '0.0.0.0:6443', '--work-dir', '/nonexistent/never-made'], { encoding: 'utf8' });
    assert.equal(r.status, 2);
    assert.match(r.stderr, /loopback only/);
    assert.equal(existsSync('/nonexistent/never-made'), false, 'no work dir made');
  });
});
