// Facts about pods that several controllers need: their claims, resource requests, and whether they still hold a node.
import type { V1PersistentVolumeClaim, V1Pod, V1Volume } from '@kubernetes/client-node';
import { parseQuantity } from '../../util/quantity.js';

/** One PVC a pod uses, named as GetPodVolumeClaims names it. */
export interface PodClaim {
  volumeName: string;
  claimName: string;
  /** Created by the ephemeral-volume controller as `<pod>-<volume>`. */
  ephemeral: boolean;
}

/** The claim a pod volume uses, or undefined for volumes without one (csi, emptyDir, ...). */
export function volumeClaimName(pod: V1Pod, v: V1Volume): string | undefined {
  if (v.persistentVolumeClaim) return v.persistentVolumeClaim.claimName;
  return v.ephemeral ? `${pod.metadata?.name}-${v.name}` : undefined;
}

export function podClaims(pod: V1Pod): PodClaim[] {
  const out: PodClaim[] = [];
  for (const v of pod.spec?.volumes ?? []) {
    const claimName = volumeClaimName(pod, v);
    if (claimName !== undefined) out.push({ volumeName: v.name, claimName, ephemeral: !v.persistentVolumeClaim });
  }
  return out;
}

/** Whether the pod is the controlling owner of the claim (required for generic ephemeral PVCs). */
export function isControlledBy(pvc: V1PersistentVolumeClaim, pod: V1Pod): boolean {
  return (pvc.metadata?.ownerReferences ?? []).some((r) => r.controller === true && r.uid === pod.metadata?.uid);
}

export interface Requests {
  cpuMilli: number;
  memoryBytes: number;
  /** Every other requested resource (ephemeral-storage, hugepages-*, extended resources such as nvidia.com/gpu), in base units. */
  scalar: Record<string, number>;
}

export function emptyRequests(): Requests {
  return { cpuMilli: 0, memoryBytes: 0, scalar: {} };
}

function containerRequests(c: { resources?: { requests?: Record<string, string>; limits?: Record<string, string> } }): Requests {
  // A container with limits but no requests requests its limits (API defaulting).
  const req = { ...(c.resources?.limits ?? {}), ...(c.resources?.requests ?? {}) };
  const scalar: Record<string, number> = {};
  for (const [k, v] of Object.entries(req)) if (k !== 'cpu' && k !== 'memory') scalar[k] = parseQuantity(v);
  return {
    cpuMilli: req.cpu !== undefined ? Math.round(parseQuantity(req.cpu) * 1000) : 0,
    memoryBytes: req.memory !== undefined ? parseQuantity(req.memory) : 0,
    scalar,
  };
}

/** Effective requests: sum of containers, at least the largest init container (NodeResourcesFit), per resource. */
export function podRequests(pod: V1Pod): Requests {
  const sum = emptyRequests();
  for (const c of pod.spec?.containers ?? []) {
    const r = containerRequests(c);
    sum.cpuMilli += r.cpuMilli;
    sum.memoryBytes += r.memoryBytes;
    for (const [k, v] of Object.entries(r.scalar)) sum.scalar[k] = (sum.scalar[k] ?? 0) + v;
  }
  for (const c of pod.spec?.initContainers ?? []) {
    const r = containerRequests(c);
    sum.cpuMilli = Math.max(sum.cpuMilli, r.cpuMilli);
    sum.memoryBytes = Math.max(sum.memoryBytes, r.memoryBytes);
    for (const [k, v] of Object.entries(r.scalar)) sum.scalar[k] = Math.max(sum.scalar[k] ?? 0, v);
  }
  return sum;
}

/** Adds one pod's requests to a running total. */
export function addRequests(total: Requests, r: Requests): void {
  total.cpuMilli += r.cpuMilli;
  total.memoryBytes += r.memoryBytes;
  for (const [k, v] of Object.entries(r.scalar)) total.scalar[k] = (total.scalar[k] ?? 0) + v;
}

/** Pods in a final phase no longer hold node resources. */
export function isTerminated(pod: V1Pod): boolean {
  return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
}

export function podKey(pod: V1Pod): string {
  return `${pod.metadata?.namespace ?? 'default'}/${pod.metadata?.name ?? ''}`;
}

export function requestedBytes(pvc: V1PersistentVolumeClaim): number | undefined {
  const s = pvc.spec?.resources?.requests?.storage;
  return s === undefined ? undefined : parseQuantity(s);
}
