// Which nodes count as lost and which PVs are pinned to one: the rules the handler's safety rests on.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Node, V1PersistentVolume } from '@kubernetes/client-node';
import { lostNodes, pinnedNode, podUsesClaim } from '../../src/driver/cluster/node-loss/lost-nodes.js';

const KEY = 'topology.lode.csi.dev/node';

function pv(terms: { key: string; operator: string; values?: string[] }[][]): V1PersistentVolume {
  return { spec: { nodeAffinity: { required: { nodeSelectorTerms: terms.map((t) => ({ matchExpressions: t })) } } } };
}

function node(name: string, taints: { key: string; effect: string }[] = [], ready = 'True'): V1Node {
  return { metadata: { name }, spec: { taints }, status: { conditions: [{ type: 'Ready', status: ready }] } };
}

describe('lost-node rules', () => {
  it('a PV is pinned only when every term names the same one node under the driver\'s key', () => {
    assert.equal(pinnedNode(pv([[{ key: KEY, operator: 'In', values: ['n1'] }]]), KEY), 'n1');
    assert.equal(pinnedNode(pv([[{ key: KEY, operator: 'In', values: ['n1'] }], [{ key: KEY, operator: 'In', values: ['n1'] }]]), KEY), 'n1');
    assert.equal(pinnedNode(pv([[{ key: KEY, operator: 'In', values: ['n1'] }], [{ key: KEY, operator: 'In', values: ['n2'] }]]), KEY), undefined, 'either of two nodes');
    assert.equal(pinnedNode(pv([[{ key: KEY, operator: 'In', values: ['n1', 'n2'] }]]), KEY), undefined);
    assert.equal(pinnedNode(pv([[{ key: KEY, operator: 'NotIn', values: ['n1'] }]]), KEY), undefined);
    assert.equal(pinnedNode(pv([[{ key: 'kubernetes.io/hostname', operator: 'In', values: ['n1'] }]]), KEY), undefined, 'another key');
    assert.equal(pinnedNode({ spec: {} }, KEY), undefined, 'no affinity');
  });

  it('only a missing Node or the out-of-service taint makes a node lost, never NotReady or unreachable', () => {
    const nodes = [
      node('ready'),
      node('not-ready', [{ key: 'node.kubernetes.io/not-ready', effect: 'NoExecute' }], 'False'),
      node('unreachable', [{ key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' }], 'Unknown'),
      node('shut-down', [{ key: 'node.kubernetes.io/out-of-service', effect: 'NoSchedule' }], 'Unknown'),
    ];
    const lost = lostNodes(['ready', 'not-ready', 'unreachable', 'gone'], nodes);
    assert.deepEqual(lost.map((l) => [l.name, l.signal]), [['gone', 'deleted'], ['shut-down', 'out-of-service']]);
  });

  it('a pod uses a claim by name, or as its generic ephemeral volume', () => {
    const pod = { metadata: { name: 'web-0' }, spec: { containers: [], volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data-web-0' } }, { name: 'scratch', ephemeral: {} }] } };
    assert.ok(podUsesClaim(pod, 'data-web-0'));
    assert.ok(podUsesClaim(pod, 'web-0-scratch'));
    assert.ok(!podUsesClaim(pod, 'data-web-1'));
  });
});
