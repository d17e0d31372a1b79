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
