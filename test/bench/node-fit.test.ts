// NodeResourcesFit beyond cpu and memory: ephemeral-storage and extended resources are counted, not dropped.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { emptyUsage, nodeFitReasons } from '../../src/bench/controllers/scheduler/node-fit.js';
import { addRequests, podRequests } from '../../src/bench/api/pod-helpers.js';

const node = (allocatable: Record<string, string>): V1Node => ({ metadata: { name: 'n1', labels: {} }, status: { allocatable } });
const pod = (requests: Record<string, string>, limits: Record<string, string> = {}): V1Pod => ({
  metadata: { name: 'p', namespace: 'default' },
  spec: { containers: [{ name: 'app', image: 'i', resources: { requests, limits } }] },
});

describe('NodeResourcesFit, other resources', () => {
  it('a GPU request fits only a node that advertises enough GPUs', () => {
    const gpu = pod({ 'nvidia.com/gpu': '1' }, { 'nvidia.com/gpu': '1' });
    assert.deepEqual(nodeFitReasons(gpu, node({ cpu: '4' }), emptyUsage()), ['Insufficient nvidia.com/gpu']);
    assert.deepEqual(nodeFitReasons(gpu, node({ cpu: '4', 'nvidia.com/gpu': '1' }), emptyUsage()), []);
    const used = emptyUsage();
    addRequests(used, podRequests(gpu));
    assert.deepEqual(nodeFitReasons(gpu, node({ cpu: '4', 'nvidia.com/gpu': '1' }), used), ['Insufficient nvidia.com/gpu'], 'the one GPU is taken');
  });

  it('ephemeral-storage and hugepages are counted against what the node lists', () => {
    const scratch = pod({ 'ephemeral-storage': '2Gi', 'hugepages-2Mi': '4Mi' }, { 'hugepages-2Mi': '4Mi' });
    assert.deepEqual(nodeFitReasons(scratch, node({ 'ephemeral-storage': '1Gi' }), emptyUsage()), ['Insufficient ephemeral-storage', 'Insufficient hugepages-2Mi']);
    assert.deepEqual(nodeFitReasons(scratch, node({ 'ephemeral-storage': '10Gi', 'hugepages-2Mi': '8Mi' }), emptyUsage()), []);
    assert.deepEqual(nodeFitReasons(pod({ 'ephemeral-storage': '2Gi' }), node({}), emptyUsage()), [], 'a node that lists no ephemeral-storage is not limited (the bench\'s cpu/memory rule)');
  });
});
