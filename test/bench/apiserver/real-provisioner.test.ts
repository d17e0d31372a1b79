// The real csi-provisioner v5.2.0 (../shared/tools/csi), run per node with the DaemonSet's flags against a held bench: it speaks protobuf, connects to the node's Lode driver and publishes CSIStorageCapacity objects with the driver's figures; the real csi-resizer holds its leader-election Lease there.
import { after, before, describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdtempSync, readdirSync, readFileSync, rmdirSync, rmSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CoordinationV1Api, CoreV1Api, KubeConfig, StorageV1Api, type V1CSIStorageCapacity } from '@kubernetes/client-node';
import { daemonSetArgs as sharedDaemonSetArgs } from '../../../src/bench/sidecars/daemonset-args.js';
import { needsRoot } from '../run-helpers.js';
import { csiTool } from '../../helpers/csi-tools.js';
import { skipOrFail } from '../../helpers/prerequisites.js';
import { parseQuantity } from '../../../src/util/quantity.js';

const MAIN = fileURLToPath(new URL('../../../src/cli/main.js', import.meta.url));
const REPO = fileURLToPath(new URL('../../../../', import.meta.url));
const SCENARIO = path.join(REPO, 'test/bench/fixtures/real-sidecars/scenario.yaml');
const NODE = 'worker-a';
const NAMESPACE = 'lode-system';
const POD = `lode-node-${NODE}`;
const DAEMONSET_UID = '6b1d4a7e-0000-4000-8000-000000000001';
const MANAGED_BY = `csi.storage.k8s.io/managed-by=external-provisioner-${NODE}`;

/**
 * A container's flags from deploy/base/daemonset.yaml (the code `lode bench --sidecars real`
 * uses), so the test runs what the DaemonSet runs: the socket path is this run's, $(NAMESPACE)
 * is expanded as kubelet expands it, and -v=5 logs enough to read a failure.
 */
function daemonSetArgs(container: string, socket: string): string[] {
  return sharedDaemonSetArgs(container, { socket, namespace: NAMESPACE, verbosity: 5 });
}

/** Polls until `check` returns a value (the provisioner and the bench run on their own; nothing here is timed). */
async function eventually<T>(what: string, check: () => Promise<T | undefined>, log: () => string, limitMs = 90_000): Promise<T> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) assert.fail(`${what} did not happen; the provisioner's log ends:\n${log().split('\n').slice(-40).join('\n')}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe('the real csi-provisioner against a held bench', { skip: needsRoot }, () => {
  let root = '';
  let bench: ChildProcess | undefined;
  let benchExit: Promise<number | null> = Promise.resolve(null);
  let provisioner: ChildProcess | undefined;
  let provisionerExit: Promise<number | null> = Promise.resolve(null);
  let logFile = '';
  let missing: string | undefined;
  let storage: StorageV1Api;
  let core: CoreV1Api;
  let coordination: CoordinationV1Api;
  let kubeconfigPath = '';
  let socketPath = '';
  let resizer: ChildProcess | undefined;
  let resizerExit: Promise<number | null> = Promise.resolve(null);
  let resizerLog = '';
  const log = (): string => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : '');

  before(async () => {
    const binary = await csiTool('csi-provisioner');
    if (typeof binary !== 'string') {
      missing = binary.missing;
      return;
    }
    root = mkdtempSync('/tmp/lode-real-provisioner-');
    logFile = path.join(root, 'csi-provisioner.log');
    const work = path.join(root, 'work');
    bench = spawn(process.execPath, [MAIN, 'bench', SCENARIO, '--api', '127.0.0.1:0', '--hold', '--work-dir', work, '--events', 'none'], { stdio: ['ignore', 'pipe', 'pipe'] });
    benchExit = new Promise((resolve) => bench!.on('exit', (c) => resolve(c)));
    let stdout = '';
    let stderr = '';
    await new Promise<void>((resolve, reject) => {
      bench!.stdout!.on('data', (d: Buffer) => { stdout += d.toString(); });
      bench!.stderr!.on('data', (d: Buffer) => { stderr += d.toString(); if (stderr.includes('holding the cluster')) resolve(); });
      bench!.on('exit', (c) => reject(new Error(`bench exited early (${c}): ${stderr}`)));
    });
    const kubeconfig = /kubeconfig (\S+) \(export/.exec(stdout)?.[1] ?? '';
    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfig);
    storage = kc.makeApiClient(StorageV1Api);
    core = kc.makeApiClient(CoreV1Api);
    coordination = kc.makeApiClient(CoordinationV1Api);
    // The DaemonSet's pod on this node: --capacity-ownerref-level=1 makes the provisioner read it
    // and own its objects by its controller, the DaemonSet (which the bench does not serve, as the
    // provisioner never reads it).
    await core.createNamespacedPod({
      namespace: NAMESPACE,
      body: {
        metadata: { name: POD, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'lode-node', uid: DAEMONSET_UID, controller: true }] },
        spec: { nodeName: NODE, containers: [{ name: 'csi-provisioner', image: 'registry.k8s.io/sig-storage/csi-provisioner:v5.2.0' }] },
      },
    });
    const run = readdirSync(work).find((d) => d.startsWith('run-'));
    assert.ok(run, `a run directory under ${work}`);
    const socket = path.join(work, run, 'nodes', NODE, 'csi.sock');
    assert.ok(existsSync(socket), `the node's driver socket ${socket}`);
    const out = createWriteStream(logFile);
    kubeconfigPath = kubeconfig;
    socketPath = socket;
    provisioner = spawn(binary, [`--kubeconfig=${kubeconfig}`, ...daemonSetArgs('csi-provisioner', socket)], {
      env: { ...process.env, NODE_NAME: NODE, NAMESPACE, POD_NAME: POD },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    provisioner.stdout!.pipe(out);
    provisioner.stderr!.pipe(out);
    provisionerExit = new Promise((resolve) => provisioner!.on('exit', (c) => resolve(c)));
  });

  after(async () => {
    if (resizer && resizer.exitCode === null) resizer.kill('SIGTERM');
    await resizerExit;
    if (provisioner && provisioner.exitCode === null) provisioner.kill('SIGTERM');
    await provisionerExit;
    if (bench && bench.exitCode === null) bench.kill('SIGINT');
    await benchExit;
    if (root !== '') {
      const work = path.join(root, 'work');
      // The run removed what it made; only the empty work directory and the log are left.
      if (existsSync(work) && readdirSync(work).length === 0) rmdirSync(work);
      rmSync(logFile, { force: true });
      if (resizerLog !== '') rmSync(resizerLog, { force: true });
      if (readdirSync(root).length === 0) rmdirSync(root);
    }
  });

  function skipIfMissing(t: TestContext): boolean {
    // A tool of the test environment: CI has it, so there its absence is a failure.
    return skipOrFail(t, missing);
  }

  const published = async (): Promise<V1CSIStorageCapacity[]> => (await storage.listNamespacedCSIStorageCapacity({ namespace: NAMESPACE, labelSelector: MANAGED_BY })).items;

  it('publishes this node\'s capacity per class, with the figures the bench\'s own publisher got from the same driver', async (t) => {
    if (skipIfMissing(t)) return;
    const real = await eventually('two CSIStorageCapacity objects of the real provisioner', async () => {
      const items = await published();
      return items.length === 2 ? items : undefined;
    }, log);
    // The bench's central publisher asked the same driver: its objects are the reference.
    const reference = (await storage.listNamespacedCSIStorageCapacity({ namespace: NAMESPACE, labelSelector: 'csi.storage.k8s.io/managed-by=external-provisioner' })).items;
    assert.equal(reference.length, 2);
    for (const c of real) {
      const ref = reference.find((r) => r.storageClassName === c.storageClassName);
      assert.ok(ref, `a reference object for ${c.storageClassName}`);
      assert.deepEqual(c.nodeTopology?.matchLabels, { 'topology.lode.csi.dev/node': NODE });
      assert.equal(c.metadata?.labels?.['csi.storage.k8s.io/drivername'], 'lode.csi.dev');
      assert.deepEqual(c.metadata?.ownerReferences?.map((o) => `${o.apiVersion} ${o.kind} ${o.name} ${o.uid} ${o.controller}`), [`apps/v1 DaemonSet lode-node ${DAEMONSET_UID} true`]);
      assert.ok(parseQuantity(String(c.capacity)) > 0, `${c.storageClassName}: non-zero capacity (${c.capacity})`);
      assert.equal(parseQuantity(String(c.capacity)), parseQuantity(String(ref.capacity)), `${c.storageClassName}: capacity as the bench's publisher has it`);
      assert.equal(parseQuantity(String(c.maximumVolumeSize ?? '0')), parseQuantity(String(ref.maximumVolumeSize ?? '0')), `${c.storageClassName}: maximumVolumeSize as the bench's publisher has it`);
      t.diagnostic(`${c.storageClassName}: capacity ${c.capacity}, maximumVolumeSize ${c.maximumVolumeSize}`);
    }
    // The node's pool is 160Mi and holds no volume yet.
    assert.equal(parseQuantity(String(real.find((c) => c.storageClassName === 'lode-local')?.capacity)), 160 * 1024 * 1024);
    assert.equal(provisioner?.exitCode, null, 'the provisioner keeps running');
    assert.doesNotMatch(log(), /media type|not supported/i);
  });

  it('follows StorageClasses through its protobuf watch: a new class gets an object, a deleted one loses it', async (t) => {
    if (skipIfMissing(t)) return;
    await eventually('the first objects', async () => ((await published()).length === 2 ? true : undefined), log);
    await storage.createStorageClass({
      body: { metadata: { name: 'lode-extra' }, provisioner: 'lode.csi.dev', parameters: { pool: 'local' }, volumeBindingMode: 'WaitForFirstConsumer', reclaimPolicy: 'Delete' },
    });
    const extra = await eventually('an object for the new class', async () => (await published()).find((c) => c.storageClassName === 'lode-extra'), log);
    assert.equal(parseQuantity(String(extra.capacity)), 160 * 1024 * 1024);
    await storage.deleteStorageClass({ name: 'lode-extra' });
    await eventually('the new class\'s object removed', async () => ((await published()).some((c) => c.storageClassName === 'lode-extra') ? undefined : true), log);
    assert.equal(provisioner?.exitCode, null, 'the provisioner keeps running');
  });

  it('csi-resizer v1.13.2 with the DaemonSet\'s flags takes its leader-election Lease and renews it (a protobuf Lease, MicroTime times)', async (t) => {
    if (skipIfMissing(t)) return;
    const binary = await csiTool('csi-resizer');
    if (typeof binary !== 'string') {
      skipOrFail(t, binary.missing);
      return;
    }
    resizerLog = path.join(root, 'csi-resizer.log');
    const out = createWriteStream(resizerLog);
    resizer = spawn(binary, [`--kubeconfig=${kubeconfigPath}`, ...daemonSetArgs('csi-resizer', socketPath)], { env: { ...process.env, NAMESPACE }, stdio: ['ignore', 'pipe', 'pipe'] });
    resizer.stdout!.pipe(out);
    resizer.stderr!.pipe(out);
    resizerExit = new Promise((resolve) => resizer!.on('exit', (c) => resolve(c)));
    const rlog = (): string => (existsSync(resizerLog) ? readFileSync(resizerLog, 'utf8') : '');
    const read = async (): Promise<{ holder: string; renew: number; acquire: number } | undefined> => {
      try {
        const l = await coordination.readNamespacedLease({ name: 'external-resizer-lode-csi-dev', namespace: NAMESPACE });
        const renew = l.spec?.renewTime ? new Date(l.spec.renewTime).getTime() : NaN;
        const acquire = l.spec?.acquireTime ? new Date(l.spec.acquireTime).getTime() : NaN;
        return l.spec?.holderIdentity && Number.isFinite(renew) && Number.isFinite(acquire) ? { holder: l.spec.holderIdentity, renew, acquire } : undefined;
      } catch {
        return undefined;
      }
    };
    const first = await eventually('the resizer\'s Lease', read, rlog);
    // Renewed: a later renewTime written by the same holder.
    const later = await eventually('a renewal of the Lease', async () => {
      const l = await read();
      return l !== undefined && l.renew > first.renew ? l : undefined;
    }, rlog);
    assert.equal(later.holder, first.holder);
    assert.ok(later.acquire <= later.renew);
    assert.match(rlog(), /successfully acquired lease lode-system\/external-resizer-lode-csi-dev/);
    assert.equal(resizer.exitCode, null, 'the resizer keeps running');
  });
});
