// The well-known taints and the Ready condition the node-loss controllers read, with upstream's rules for them.
import type { V1Node, V1Taint, V1Toleration } from '@kubernetes/client-node';

export const TAINT_OUT_OF_SERVICE = 'node.kubernetes.io/out-of-service';
export const TAINT_UNREACHABLE = 'node.kubernetes.io/unreachable';
export const TAINT_NOT_READY = 'node.kubernetes.io/not-ready';

/**
 * Upstream's IsNodeReady wants a Ready condition that is True. The bench's kubelets do not
 * post node status, so a Node with no Ready condition counts as ready, as a real kubelet
 * would have reported it; only the bench's node lifecycle (or a patch) makes one not ready.
 */
export function nodeReady(node: V1Node): boolean {
  const ready = (node.status?.conditions ?? []).filter((c) => c.type === 'Ready').pop();
  return ready === undefined || ready.status === 'True';
}

export function hasTaintKey(node: V1Node, key: string): boolean {
  return (node.spec?.taints ?? []).some((t) => t.key === key);
}

export function noExecuteTaints(node: V1Node | undefined): V1Taint[] {
  return (node?.spec?.taints ?? []).filter((t) => t.effect === 'NoExecute');
}

/** DefaultTolerationSeconds admission: 300 s for not-ready and unreachable NoExecute, unless the pod already tolerates them. */
export const DEFAULT_TOLERATION_SECONDS = 300;

export function withDefaultTolerations(tolerations: V1Toleration[] | undefined): V1Toleration[] {
  const out = [...(tolerations ?? [])];
  for (const key of [TAINT_NOT_READY, TAINT_UNREACHABLE]) {
    const covered = out.some((t) => (t.effect === undefined || t.effect === '' || t.effect === 'NoExecute') && (t.key === key || ((t.key ?? '') === '' && t.operator === 'Exists')));
    if (!covered) out.push({ key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: DEFAULT_TOLERATION_SECONDS });
  }
  return out;
}
