// The value of this node's profile label, read from its Node object.
import type { KubeClient } from '../../../kube/kube-client.js';

/** The label's value on this node's Node ('' and absent alike: undefined); throws when the API does not answer. */
export async function readProfileValue(kube: KubeClient, nodeId: string, labelKey: string): Promise<string | undefined> {
  const node = await kube.bounded(`get node ${nodeId}`, (a) => a.core.readNode({ name: nodeId }));
  const value = node.metadata?.labels?.[labelKey];
  return value === undefined || value === '' ? undefined : value;
}
