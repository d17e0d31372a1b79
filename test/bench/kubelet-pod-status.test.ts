// The status the bench's kubelet writes: every container ready, PodScheduled kept first with its time, no invented IPs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runningPodStatus } from '../../src/bench/controllers/kubelet-pod-status.js';

test('a started pod reads as Running with each container ready, and keeps when it was scheduled', () => {
  const scheduled = new Date('2026-01-01T00:00:05Z');
  const now = new Date('2026-01-01T00:01:00Z');
  const status = runningPodStatus({
    metadata: { name: 'p' },
    spec: { containers: [{ name: 'app', image: 'busybox' }, { name: 'side' }], initContainers: [{ name: 'init' }] },
    status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'True', lastTransitionTime: scheduled }] },
  }, now);
  assert.equal(status.phase, 'Running');
  assert.deepEqual(status.conditions?.map((c) => c.type), ['PodScheduled', 'PodReadyToStartContainers', 'Initialized', 'ContainersReady', 'Ready']);
  assert.equal(status.conditions?.[0]?.lastTransitionTime, scheduled);
  assert.deepEqual(status.containerStatuses?.map((c) => [c.name, c.ready, c.restartCount]), [['app', true, 0], ['side', true, 0]]);
  assert.equal(status.initContainerStatuses?.[0]?.state?.terminated?.reason, 'Completed');
  assert.equal(status.podIP, undefined);
  assert.equal(status.startTime, now);
});
