// The bench's model of losing a node, on nodes without Lode pools (no driver, so no disks): pod GC, the taint eviction controller, node lifecycle, the scheduler.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { checkInlineObjects, UnmodelledFields } from '../../src/bench/manifests/load-manifests.js';
import { runScenario } from '../../src/bench/scenario/scenario-runner.js';
import type { Step } from '../../src/bench/scenario/scenario-file.js';
import type { Cluster } from '../../src/bench/cluster/cluster.js';
import type { RunResult } from '../../src/bench/scenario/run-result.js';
import { GC_CHECK_PERIOD_MS, QUARANTINE_MS } from '../../src/bench/controllers/pod-gc.js';
import { NODE_MONITOR_GRACE_MS } from '../../src/bench/controllers/node-lifecycle.js';
import { DEFAULT_TOLERATION_SECONDS, TAINT_OUT_OF_SERVICE, TAINT_UNREACHABLE } from '../../src/bench/api/node-taints.js';
import { ApiServer } from '../../src/bench/apiserver/server.js';
import { eventsOf, markOf } from './run-helpers.js';

const u = new UnmodelledFields();
const nodes = checkInlineObjects(['n1', 'n2'].map((name) => ({ apiVersion: 'v1', kind: 'Node', metadata: { name } })), 'nodes', u);
/** One replica that prefers n1, so it starts there whatever the seed. */
const statefulSet = checkInlineObjects([{
  apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'web' },
  spec: {
    replicas: 1, serviceName: 'web', selector: { matchLabels: { app: 'web' } },
    template: {
      metadata: { labels: { app: 'web' } },
      spec: {
        affinity: { nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, preference: { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['n1'] }] } }] } },
        containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.9' }],
      },
    },
  },
}], 'statefulset', u);

interface Run {
  result: RunResult;
  cluster: Cluster;
  /** Every version of pod web-0 as written, in order, with the virtual time of the write. */
  web0: { ms: number; type: string; pod: V1Pod }[];
}

async function run(steps: Step[], onStep?: (index: number, cluster: Cluster) => void): Promise<Run> {
  const root = mkdtempSync('/tmp/lode-bench-test-');
  let cluster: Cluster | undefined;
  const web0: Run['web0'] = [];
  try {
    const result = await runScenario({
      name: 'node-loss-model', description: '', file: 'node-loss-model.test.ts', seed: 1, capacityPollMs: 60_000, provisioning: 'distributed',
      steps: [
        { op: 'apply', objects: nodes, label: 'nodes' },
        { op: 'apply', objects: statefulSet, label: 'statefulset' },
        { op: 'wait', condition: { for: 'podsRunning', names: ['web-0'] }, timeoutMs: 60_000, label: 'running' },
        ...steps,
      ],
    }, {
      workDir: join(root, 'run'),
      onStep: (i, _step, c) => onStep?.(i, c),
      onCluster: (c) => {
        cluster = c;
        c.store.watch('Pod', (e) => { if (e.object.metadata?.name === 'web-0') web0.push({ ms: c.clock.now(), type: e.type, pod: e.object }); });
      },
    });
    assert.deepEqual(result.controllerErrors, []);
    assert.deepEqual(result.teardownProblems, []);
    return { result, cluster: cluster!, web0 };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

const mark = (text: string): Step => ({ op: 'mark', text });
const advance = (ms: number): Step => ({ op: 'advance', ms });
const podOf = (r: RunResult, text: string): { node: string; phase: string } | undefined => markOf(r, text).pods.find((p) => p.name === 'default/web-0');

describe('node loss in the bench', () => {
  it('pod GC force-deletes the pods of a deleted Node after its quarantine, and the StatefulSet starts the pod elsewhere', async () => {
    const { result, web0 } = await run([
      mark('before'),
      { op: 'delete', kind: 'Node', name: 'n1', namespace: undefined },
      advance(QUARANTINE_MS - 1_000),
      mark('quarantined'),
      advance(GC_CHECK_PERIOD_MS * 2),
      { op: 'wait', condition: { for: 'podsRunning', names: ['web-0'] }, timeoutMs: 60_000, label: 'back' },
      mark('after'),
    ]);
    assert.equal(podOf(result, 'before')?.node, 'n1');
    // Within the quarantine the pod stays, Running as its last status said: nothing acts for a node just gone.
    assert.deepEqual(podOf(result, 'quarantined'), { ...podOf(result, 'quarantined'), node: 'n1', phase: 'Running' });
    const deletedAt = web0.findIndex((w) => w.type === 'DELETED');
    assert.ok(deletedAt > 0, 'web-0 on n1 deleted');
    const failed = web0[deletedAt - 1]!;
    // Marked Failed with the DisruptionTarget condition, then deleted at once (grace period 0: no Terminating stage).
    assert.equal(failed.pod.status?.phase, 'Failed');
    assert.equal(failed.pod.metadata?.deletionTimestamp, undefined);
    assert.deepEqual(failed.pod.status?.conditions?.filter((c) => c.type === 'DisruptionTarget').map((c) => [c.reason, c.message]), [['DeletionByPodGC', 'PodGC: node no longer exists']]);
    const deleteMs = web0[deletedAt]!.ms;
    const nodeGoneMs = markOf(result, 'before').virtualMs;
    assert.ok(deleteMs - nodeGoneMs >= QUARANTINE_MS, `deleted ${deleteMs - nodeGoneMs} ms after the Node, not before the quarantine ended`);
    assert.equal(deleteMs % GC_CHECK_PERIOD_MS, 0, 'on a tick of the 20 s loop');
    // The scheduler had only n2 left.
    assert.equal(podOf(result, 'after')?.node, 'n2');
    assert.equal(podOf(result, 'after')?.phase, 'Running');
  });

  it('a Node deleted by a client through the API is lost just the same: its pod goes after the quarantine', async () => {
    const server = new ApiServer({ host: '127.0.0.1', port: 0 });
    let deleted: Promise<number> | undefined;
    try {
      const { result, web0, cluster } = await run([
        // Paced, so the run waits in wall time for the client's DELETE instead of jumping ahead.
        { op: 'wait', condition: { for: 'gone', kind: 'Node', name: 'n1' }, timeoutMs: 30_000, label: 'deleted', paced: true },
        mark('deleted'),
        advance(QUARANTINE_MS + GC_CHECK_PERIOD_MS),
        mark('after'),
      ], (i, cluster) => {
        if (i !== 3) return;
        deleted = server.start().then(async (base) => {
          server.attach(cluster);
          const res = await fetch(`${base}/api/v1/nodes/n1`, { method: 'DELETE' });
          return res.status;
        });
      });
      assert.equal(await deleted, 200);
      assert.equal(cluster.lostNodes.get('n1'), 'deleted', 'its kubelet stopped acting');
      assert.equal(result.waits.find((w) => w.label === 'deleted')?.outcome, 'condition');
      assert.equal(podOf(result, 'deleted')?.node, 'n1', 'still there right after the DELETE');
      assert.equal(web0.find((w) => w.type === 'DELETED')?.pod.status?.phase, 'Failed', 'removed by pod GC');
      assert.deepEqual([podOf(result, 'after')?.node, podOf(result, 'after')?.phase], ['n2', 'Running']);
    } finally {
      await server.close();
    }
  });

  it('a shut-down node goes NotReady with the unreachable taints; without out-of-service its pod is evicted after 300 s and stays Terminating', async () => {
    const { result, cluster, web0 } = await run([
      { op: 'shutdownNode', node: 'n1' },
      advance(NODE_MONITOR_GRACE_MS - 1_000),
      mark('grace'),
      advance(2_000),
      mark('not-ready'),
      advance(DEFAULT_TOLERATION_SECONDS * 1000 + 60_000),
      mark('evicted'),
      advance(30 * 60_000),
      mark('much-later'),
    ]);
    const n1 = cluster.store.get('Node', 'n1')!;
    // The kubelet posted Ready and no pressure when it registered; the node lifecycle controller marks all of them Unknown.
    assert.deepEqual(n1.status?.conditions?.map((c) => [c.type, c.status, c.reason]), [
      ['MemoryPressure', 'Unknown', 'NodeStatusUnknown'], ['DiskPressure', 'Unknown', 'NodeStatusUnknown'], ['PIDPressure', 'Unknown', 'NodeStatusUnknown'], ['Ready', 'Unknown', 'NodeStatusUnknown'],
    ]);
    assert.deepEqual(n1.spec?.taints?.map((t) => `${t.key}:${t.effect}`), [`${TAINT_UNREACHABLE}:NoSchedule`, `${TAINT_UNREACHABLE}:NoExecute`]);
    const notReady = eventsOf(result, 'NodeNotReady', 'n1');
    assert.equal(notReady.length, 1);
    assert.ok(notReady[0]!.timeMs >= markOf(result, 'grace').virtualMs, 'not before the grace period');
    // Evicted by the taint manager once the default 300 s toleration ran out: a graceful delete.
    const eviction = eventsOf(result, 'TaintManagerEviction', 'web-0');
    assert.equal(eviction.length, 1);
    assert.ok(eviction[0]!.timeMs - notReady[0]!.timeMs >= DEFAULT_TOLERATION_SECONDS * 1000);
    const last = web0[web0.length - 1]!;
    assert.notEqual(last.type, 'DELETED', 'no kubelet finishes the delete and pod GC leaves it alone');
    assert.ok(last.pod.metadata?.deletionTimestamp, 'web-0 is Terminating');
    assert.equal(last.pod.spec?.nodeName, 'n1');
    assert.equal(podOf(result, 'much-later')?.node, 'n1', 'the StatefulSet does not replace a pod that still exists');
    // The report says so: not running, and why.
    const row = result.pods.find((p) => p.name === 'default/web-0')!;
    assert.deepEqual([row.terminating, row.reason], [true, 'Terminating: its node n1 is shut down, no kubelet stops it']);
    assert.deepEqual(result.metrics.podsStuck, [{ pod: 'default/web-0', reason: row.reason }]);
  });

  it('the out-of-service taint on a NotReady node: the taint manager deletes the pod, pod GC force-deletes it, the StatefulSet recreates it elsewhere', async () => {
    const { result, web0 } = await run([
      { op: 'shutdownNode', node: 'n1' },
      advance(NODE_MONITOR_GRACE_MS + 1_000),
      mark('not-ready'),
      { op: 'taint', node: 'n1', taint: { key: TAINT_OUT_OF_SERVICE, value: 'nodeshutdown', effect: 'NoExecute' } },
      mark('tainted'),
      { op: 'wait', condition: { for: 'podsRunning', names: ['web-0'] }, timeoutMs: 5 * 60_000, label: 'back' },
      mark('after'),
    ]);
    assert.equal(podOf(result, 'not-ready')?.node, 'n1');
    const eviction = eventsOf(result, 'TaintManagerEviction', 'web-0');
    assert.deepEqual(eviction.map((e) => e.message), ['Marking for deletion Pod default/web-0']);
    assert.equal(eviction[0]!.timeMs, markOf(result, 'tainted').virtualMs, 'at once: the pod does not tolerate the taint');
    const gone = web0.findIndex((w) => w.type === 'DELETED');
    assert.ok(gone > 0);
    // Terminating first (the taint manager's graceful delete), then Failed and gone (pod GC's gcTerminating).
    assert.ok(web0[gone - 1]!.pod.metadata?.deletionTimestamp);
    assert.equal(web0[gone - 1]!.pod.status?.phase, 'Failed');
    assert.ok(web0[gone]!.ms - markOf(result, 'tainted').virtualMs <= GC_CHECK_PERIOD_MS, 'on the next tick of pod GC');
    assert.deepEqual([podOf(result, 'after')?.node, podOf(result, 'after')?.phase], ['n2', 'Running']);
  });

  it('the scheduler keeps new pods off a node with the unreachable taint and off a deleted one', async () => {
    const pods = checkInlineObjects(['a', 'b'].map((name) => ({
      apiVersion: 'v1', kind: 'Pod', metadata: { name },
      spec: { nodeSelector: { 'kubernetes.io/hostname': 'n1' }, containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.9' }] },
    })), 'pods', u);
    const { result } = await run([
      { op: 'shutdownNode', node: 'n1' },
      advance(NODE_MONITOR_GRACE_MS + 1_000),
      { op: 'apply', objects: [pods[0]!], label: 'a' },
      advance(10_000),
      { op: 'delete', kind: 'Node', name: 'n1', namespace: undefined },
      { op: 'apply', objects: [pods[1]!], label: 'b' },
      advance(10_000),
    ]);
    const a = result.pods.find((p) => p.name === 'default/a')!;
    const b = result.pods.find((p) => p.name === 'default/b')!;
    assert.deepEqual([a.node, a.phase], ['', 'Pending']);
    assert.match(eventsOf(result, 'FailedScheduling', 'a')[0]!.message, /0\/2 nodes are available: 1 node\(s\) didn't match Pod's node affinity\/selector, 1 node\(s\) had untolerated taint \{node\.kubernetes\.io\/unreachable: \}/);
    assert.deepEqual([b.node, b.phase], ['', 'Pending']);
    assert.equal(eventsOf(result, 'FailedScheduling', 'b')[0]!.message, "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector.");
  });
});
