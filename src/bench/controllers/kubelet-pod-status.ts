// The status the bench's kubelet writes for a pod it started: what kubectl and client code read from a real kubelet.
import type { V1ContainerStatus, V1Pod, V1PodCondition, V1PodStatus } from '@kubernetes/client-node';

/**
 * A pod's status once its volumes are mounted and checked. The bench runs no containers; a
 * pod it starts counts as having every container started and ready, because that is what
 * the bench stands for (the volumes a real kubelet would hand to them are ready), and it
 * makes `kubectl get pods` read READY 1/1 as it would on a cluster. No IPs: the bench has no
 * network, and inventing addresses would be a lie a client could act on.
 */
export function runningPodStatus(pod: V1Pod, now: Date): V1PodStatus {
  const scheduledAt = pod.status?.conditions?.find((c) => c.type === 'PodScheduled' && c.status === 'True')?.lastTransitionTime ?? now;
  const condition = (type: string, at: Date): V1PodCondition => ({ type, status: 'True', lastTransitionTime: at });
  const containers: V1ContainerStatus[] = (pod.spec?.containers ?? []).map((c) => ({
    name: c.name, image: c.image ?? '', imageID: '', ready: true, started: true, restartCount: 0,
    state: { running: { startedAt: now } },
  }));
  const init: V1ContainerStatus[] = (pod.spec?.initContainers ?? []).map((c) => ({
    name: c.name, image: c.image ?? '', imageID: '', ready: true, started: false, restartCount: 0,
    state: { terminated: { exitCode: 0, reason: 'Completed', startedAt: now, finishedAt: now } },
  }));
  return {
    ...(pod.status ?? {}),
    phase: 'Running',
    // PodScheduled first: the scheduler reads its own condition there.
    conditions: [condition('PodScheduled', scheduledAt), condition('PodReadyToStartContainers', now), condition('Initialized', now), condition('ContainersReady', now), condition('Ready', now)],
    startTime: now,
    containerStatuses: containers,
    ...(init.length > 0 ? { initContainerStatuses: init } : {}),
  };
}

/**
 * The Ready and ContainersReady conditions as the containers' readiness makes them, with
 * kubelet's reason and message while some are not; a transition time moves only on a change.
 */
function readinessConditions(status: V1PodStatus, containers: V1ContainerStatus[], now: Date): V1PodCondition[] {
  const unready = containers.filter((c) => !c.ready).map((c) => c.name);
  const value = unready.length === 0 ? 'True' : 'False';
  return (status.conditions ?? []).map((c) => {
    if (c.type !== 'Ready' && c.type !== 'ContainersReady') return c;
    const at = c.status === value && c.lastTransitionTime !== undefined ? c.lastTransitionTime : now;
    return unready.length === 0
      ? { type: c.type, status: value, lastTransitionTime: at }
      : { type: c.type, status: value, reason: 'ContainersNotReady', message: `containers with unready status: [${unready.join(' ')}]`, lastTransitionTime: at };
  });
}

/**
 * A running pod whose container `name` was killed (SIGKILL: exit code 137, as kubelet reports a
 * container the kernel killed): not ready, the container terminated until it runs again. The
 * phase stays Running, as for a container kubelet will restart (restartPolicy Always).
 */
export function containerKilledStatus(pod: V1Pod, name: string, now: Date): V1PodStatus {
  const status = pod.status ?? {};
  const containers = (status.containerStatuses ?? []).map((c) => c.name !== name ? c : {
    ...c, ready: false, started: false,
    state: { terminated: { exitCode: 137, reason: 'Error', startedAt: c.state?.running?.startedAt, finishedAt: now } },
  });
  return { ...status, conditions: readinessConditions(status, containers, now), containerStatuses: containers };
}

/** The same pod once container `name` runs again: ready, its restart counted, the kill kept as its last state. */
export function containerRestartedStatus(pod: V1Pod, name: string, now: Date): V1PodStatus {
  const status = pod.status ?? {};
  const containers = (status.containerStatuses ?? []).map((c) => c.name !== name ? c : {
    ...c, ready: true, started: true, restartCount: (c.restartCount ?? 0) + 1,
    state: { running: { startedAt: now } },
    ...(c.state?.terminated !== undefined ? { lastState: { terminated: c.state.terminated } } : {}),
  });
  return { ...status, conditions: readinessConditions(status, containers, now), containerStatuses: containers };
}
