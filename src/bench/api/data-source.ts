// Which object a claim's spec.dataSource or spec.dataSourceRef names, resolved as csi-provisioner's dataSource() does.
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';

export interface ClaimDataSource {
  kind: string;
  name: string;
  /** '' for the core group (PersistentVolumeClaim). */
  apiGroup: string;
  namespace: string;
}

/**
 * dataSource wins over dataSourceRef; the namespace is the claim's (a dataSourceRef naming
 * another namespace needs the CrossNamespaceVolumeDataSource gate, off by default, and is
 * refused with upstream's message).
 */
export function claimDataSource(pvc: V1PersistentVolumeClaim): ClaimDataSource | string | undefined {
  const ns = pvc.metadata?.namespace ?? 'default';
  const ds = pvc.spec?.dataSource;
  if (ds) return { kind: ds.kind, name: ds.name, apiGroup: ds.apiGroup ?? '', namespace: ns };
  const ref = pvc.spec?.dataSourceRef;
  if (!ref) return undefined;
  if (ref.namespace !== undefined && ref.namespace !== '') return 'dataSourceRef namespace specified but the CrossNamespaceVolumeDataSource feature is disabled';
  return { kind: ref.kind, name: ref.name, apiGroup: ref.apiGroup ?? '', namespace: ns };
}

/** A claim still waiting for its volume: Pending, or no phase yet (the API server sets Pending on create). */
export function isPendingClaim(pvc: V1PersistentVolumeClaim): boolean {
  const phase = pvc.status?.phase;
  return phase === undefined || phase === '' || phase === 'Pending';
}
