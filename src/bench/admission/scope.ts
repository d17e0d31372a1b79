// Which kinds are namespaced: the modelled ones from the kind table, the stored-only ones the bench knows of.
import { isKind, NAMESPACED } from '../api/kinds.js';

const CLUSTER_SCOPED = new Set(['Namespace', 'ClusterRole', 'ClusterRoleBinding', 'PriorityClass', 'CustomResourceDefinition', 'APIService',
  'MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration', 'IngressClass', 'RuntimeClass', 'CSINode', 'VolumeAttachment']);

export function isNamespacedKind(kind: string): boolean {
  if (isKind(kind)) return NAMESPACED[kind];
  return !CLUSTER_SCOPED.has(kind);
}
