// Drivers of the Nodes one apply brings start in parallel, yet the Nodes are created, and their components registered, in manifest order; each node's volumes are mounted in its own mount namespace.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, rmdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkInlineObjects, loadManifests, UnmodelledFields } from '../../src/bench/manifests/load-manifests.js';
import { runScenario } from '../../src/bench/scenario/scenario-runner.js';
import type { Cluster } from '../../src/bench/cluster/cluster.js';
import { ANN_LODE_POOLS } from '../../src/bench/api/annotations.js';
import { loopsUnder, mountsUnder } from '../../src/bench/nodes/sweep.js';
import { needsRoot } from './run-helpers.js';
import { DRIVER_START_CONCURRENCY } from '../../src/bench/nodes/driver-starts.js';

const DEPLOY = fileURLToPath(new URL('../../../deploy/base/', import.meta.url));

/** Mount points below `root` in a mount table (/proc/PID/mountinfo). */
function mountPointsUnder(table: string, root: string): string[] {
  return readFileSync(table, 'utf8').split('\n').map((l) => l.split(' ')[4] ?? '').filter((m) => m.startsWith(`${root}/`));
}

/** The processes `pid`'s main thread started that are still there, each as "pid state command line". */
function childrenOf(pid: number): string[] {
  const ids = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter((c) => c !== '');
  return ids.map((c) => {
    try {
      const state = readFileSync(`/proc/${c}/stat`, 'utf8').replace(/^.*\) /, '').split(' ')[0];
      return `${c} ${state} ${readFileSync(`/proc/${c}/cmdline`, 'utf8').split('\0').join(' ').trim()}`;
    } catch {
      return `${c} (gone)`;
    }
  });
}

describe('parallel driver starts', { skip: needsRoot }, () => {
  it('creates Nodes and registers their components in manifest order, the pods they run follow it, and each node mounts in its own namespace', async () => {
    // Not sorted, so an order taken from whichever driver is ready first would show.
    const names = ['node-c', 'node-a', 'node-f', 'node-b', 'node-e', 'node-d'];
    const u = new UnmodelledFields();
    const nodes = names.map((name) => ({ apiVersion: 'v1', kind: 'Node', metadata: { name, annotations: { [ANN_LODE_POOLS]: 'local=64Mi' } } }));
    const pods = names.map((n, i) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: `p${i}` }, spec: { nodeSelector: { 'kubernetes.io/hostname': n }, containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.9' }], volumes: [{ name: 'v', ephemeral: { volumeClaimTemplate: { spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'lode-local', resources: { requests: { storage: '16Mi' } } } } } }] } }));
    const root = mkdtempSync('/tmp/lode-bench-test-');
    const added: string[] = [];
    let cluster: Cluster | undefined;
    let host: string[] | undefined;
    const perNode = new Map<string, string[]>();
    const uids = new Map<number, string>();
    const result = await runScenario({
      name: 'driver-starts', description: '', file: 'driver-starts.test.ts', seed: 1, capacityPollMs: 60_000, provisioning: 'distributed',
      steps: [
        { op: 'apply', objects: loadManifests([join(DEPLOY, 'csidriver.yaml'), join(DEPLOY, 'storageclasses.yaml')], u), label: 'deploy' },
        { op: 'apply', objects: checkInlineObjects(nodes, 'nodes', u), label: 'nodes' },
        { op: 'apply', objects: checkInlineObjects(pods, 'pods', u), label: 'pods' },
        { op: 'wait', condition: { for: 'allPodsRunning' }, timeoutMs: 10 * 60_000, label: 'running' },
        { op: 'mark', text: 'running' },
      ],
    }, {
      workDir: join(root, 'run'),
      // With every pod running: where the volumes' mounts are.
      onStep: (i, _step, c) => {
        if (i !== 4) return;
        host = mountPointsUnder('/proc/self/mountinfo', root);
        for (const n of names) {
          const pid = c.node(n).driver.mountNamespacePid;
          perNode.set(n, pid === undefined ? [] : mountPointsUnder(`/proc/${pid}/mountinfo`, root));
        }
        for (const [j] of names.entries()) uids.set(j, c.store.get('Pod', `p${j}`, 'default')?.metadata?.uid ?? '');
      },
      onCluster: (c) => {
        cluster = c;
        c.store.watch('Node', (e) => { if (e.type === 'ADDED') added.push(e.object.metadata?.name ?? ''); });
      },
    });
    assert.deepEqual(added, names, 'Node objects created in manifest order');
    assert.deepEqual([...cluster!.nodes.keys()], names, 'node components registered in manifest order');
    assert.deepEqual(result.pods.map((p) => [p.name, p.node, p.phase]), names.map((n, i) => [`default/p${i}`, n, 'Running']));
    // Each node's kubelet registered its own Node and opened its informers: the request counts say so per node.
    for (const n of names) assert.equal(result.apiRequests.find((r) => r.client === `kubelet@${n}` && r.verb === 'create' && r.resource === 'nodes')?.count, 1);
    // Each node's mounts are in its own mount namespace: none on the host's, none of another node's.
    assert.deepEqual(host, [], 'no volume mounted in the bench\'s own mount namespace');
    for (const [i, n] of names.entries()) {
      const mine = perNode.get(n) ?? [];
      const uid = uids.get(i) ?? '';
      assert.notEqual(uid, '');
      assert.ok(mine.some((m) => m.includes(`/nodes/${n}/kubelet/pods/${uid}/volumes/`)), `${n}'s own namespace holds its pod's publish mount (${mine.join(', ')})`);
      assert.ok(mine.some((m) => m.endsWith('/globalmount')), `and its staging mount`);
      assert.deepEqual(mine.filter((m) => !m.includes(`/nodes/${n}/`)), [], `and no mount of another node`);
    }
    // The run's CPU split: six drivers and the bench process worked, and the machine's figure holds both.
    const cpu = result.metrics.cpu;
    assert.ok(cpu.benchMs > 0 && cpu.driversMs > 0, `bench ${cpu.benchMs} ms, drivers ${cpu.driversMs} ms`);
    assert.ok(cpu.machineMs + 20 >= cpu.benchMs + cpu.driversMs, `machine ${cpu.machineMs} ms holds bench and drivers`);
    assert.deepEqual(result.teardownProblems, []);
    assert.deepEqual(await mountsUnder(root), []);
    assert.deepEqual(await loopsUnder(root), []);
    rmdirSync(root);
  });

  it('gives up at once when drivers refuse their flags: no start is tried again, the rest are never begun, and the error is the driver\'s own', async () => {
    const names = Array.from({ length: 16 }, (_, i) => `bad-${String(i).padStart(2, '0')}`);
    const u = new UnmodelledFields();
    const nodes = names.map((name) => ({ apiVersion: 'v1', kind: 'Node', metadata: { name, annotations: { [ANN_LODE_POOLS]: 'local=64Mi' } } }));
    const root = mkdtempSync('/tmp/lode-bench-test-');
    try {
      await assert.rejects(runScenario({
        name: 'driver-starts-refused', description: '', file: 'driver-starts.test.ts', seed: 1, capacityPollMs: 60_000, provisioning: 'distributed',
        driverFlags: ['--no-such-flag'],
        steps: [
          { op: 'apply', objects: loadManifests([join(DEPLOY, 'csidriver.yaml'), join(DEPLOY, 'storageclasses.yaml')], u), label: 'deploy' },
          { op: 'apply', objects: checkInlineObjects(nodes, 'nodes', u), label: 'nodes' },
        ],
      }, { workDir: join(root, 'run'), keepWorkDir: true }), (err: Error) => {
        assert.match(err.message, /Unknown option '--no-such-flag'/);
        assert.doesNotMatch(err.message, /usage: lode driver/, 'the reason, not the usage text that follows it');
        return true;
      });
      // A node's driver.log is opened when its driver's start begins. The apply fails when the
      // first node's start does; by then the first few have begun and each that failed before it
      // began one more, but no queued start begins after it (all 16 did before).
      const begun = names.filter((n) => existsSync(join(root, 'run', 'nodes', n, 'driver.log')));
      assert.ok(begun.length >= 1 && begun.length <= 3 * DRIVER_START_CONCURRENCY, `starts begun: ${begun.length} of ${names.length}`);
      for (const n of begun) {
        const tries = readFileSync(join(root, 'run', 'nodes', n, 'driver.log'), 'utf8').split("Unknown option '--no-such-flag'").length - 1;
        assert.equal(tries, 1, `${n}'s driver was started once`);
      }
      assert.deepEqual(await mountsUnder(root), []);
      assert.deepEqual(await loopsUnder(root), []);
      // Nothing left running: a namespace holder of a driver whose start failed once outlived the
      // run and kept the bench process from ever exiting.
      // Waited for a moment: a process killed at the end of teardown may still be on its way out
      // (its exit not yet reaped) when the run returns; the holder that stayed never went.
      let left = childrenOf(process.pid);
      for (let i = 0; i < 50 && left.length > 0; i++) {
        await new Promise((r) => setTimeout(r, 100));
        left = childrenOf(process.pid);
      }
      assert.deepEqual(left, [], 'no child process left');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
