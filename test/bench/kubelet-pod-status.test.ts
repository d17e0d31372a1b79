// The status the bench's kubelet writes: every container ready, PodScheduled kept first with its time, no invented IPs; a killed container unready until it runs again, its restart counted.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { containerKilledStatus, containerRestartedStatus, runningPodStatus } from '../../src/bench/controllers/kubelet-pod-status.js';

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

test('a killed container makes the pod unready with kubelet\'s reason, and its restart makes it ready again with the kill as its last state', () => {
  const start = new Date('2026-01-01T00:00:00Z');
  const kill = new Date('2026-01-01T00:05:00Z');
  const back = new Date('2026-01-01T00:05:30Z');
  const pod = { metadata: { name: 'lode-node-n1' }, spec: { containers: [{ name: 'lode' }, { name: 'registrar' }] } };
  const running = { ...pod, status: runningPodStatus(pod, start) };
  const killed = { ...pod, status: containerKilledStatus(running, 'lode', kill) };
  assert.equal(killed.status.phase, 'Running', 'a container kubelet restarts leaves the pod Running');
  const lode = killed.status.containerStatuses?.find((c) => c.name === 'lode');
  assert.equal(lode?.ready, false);
  assert.equal(lode?.state?.terminated?.exitCode, 137);
  assert.equal(killed.status.containerStatuses?.find((c) => c.name === 'registrar')?.ready, true, 'the other container is untouched');
  const ready = killed.status.conditions?.find((c) => c.type === 'Ready');
  assert.deepEqual([ready?.status, ready?.reason, ready?.message, ready?.lastTransitionTime], ['False', 'ContainersNotReady', 'containers with unready status: [lode]', kill]);
  assert.equal(killed.status.conditions?.find((c) => c.type === 'PodScheduled')?.lastTransitionTime, start, 'other conditions keep their times');

  const restarted = containerRestartedStatus(killed, 'lode', back);
  const again = restarted.containerStatuses?.find((c) => c.name === 'lode');
  assert.deepEqual([again?.ready, again?.restartCount, again?.state?.running?.startedAt], [true, 1, back]);
  assert.equal(again?.lastState?.terminated?.finishedAt, kill);
  const readyAgain = restarted.conditions?.find((c) => c.type === 'Ready');
  assert.deepEqual([readyAgain?.status, readyAgain?.reason, readyAgain?.lastTransitionTime], ['True', undefined, back]);
});
