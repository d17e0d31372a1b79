// The conditions a kubelet posts for its Node once it runs: Ready, and no memory, disk or PID pressure.
import type { V1Node, V1NodeCondition } from '@kubernetes/client-node';

/**
 * A running kubelet reports these on its first status update (setNodeStatus); `kubectl get
 * nodes` reads Ready from them. The bench's kubelets post no heartbeats afterwards, so the
 * conditions stay as they are until the node lifecycle controller finds a node silent (shut
 * down) and sets Ready to Unknown. Conditions the Node already carries (a scenario's own) are kept.
 */
export function withKubeletConditions(node: V1Node, now: Date): V1Node {
  const have = new Set((node.status?.conditions ?? []).map((c) => c.type));
  const add: V1NodeCondition[] = [];
  const cond = (type: string, status: string, reason: string, message: string): void => {
    if (!have.has(type)) add.push({ type, status, reason, message, lastHeartbeatTime: now, lastTransitionTime: now });
  };
  cond('MemoryPressure', 'False', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available');
  cond('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure');
  cond('PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available');
  cond('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status');
  if (add.length === 0) return node;
  return { ...node, status: { ...(node.status ?? {}), conditions: [...(node.status?.conditions ?? []), ...add] } };
}
