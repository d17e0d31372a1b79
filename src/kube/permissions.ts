// Every API request the driver makes, by feature: the source of the driver's ClusterRole in deploy/base/rbac.yaml, which a test keeps equal to it.
export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete';

export type ApiFeature = 'api-access' | 'pod-reservations' | 'node-loss' | 'orphans';

export interface Permission {
  feature: ApiFeature;
  /** '' for the core group. */
  group: string;
  /** Plural, with '/subresource' where the request names one. */
  resource: string;
  verbs: readonly Verb[];
  /** What the feature does with it, said in the ClusterRole's comment. */
  why: string;
}

/** One entry per (feature, group, resource); a request the code makes outside this list is a bug the RBAC test reports. */
export const PERMISSIONS: readonly Permission[] = [
  { feature: 'api-access', group: '', resource: 'nodes', verbs: ['get'], why: 'start-up check of the credentials: this node\'s own Node object' },
  { feature: 'pod-reservations', group: '', resource: 'pods', verbs: ['get', 'list'], why: 'the pending pods using a claim being created; whether a pod holding a reservation still waits' },
  { feature: 'pod-reservations', group: '', resource: 'persistentvolumeclaims', verbs: ['get'], why: 'a pending pod\'s other claims: bound yet, selected node, size' },
  { feature: 'pod-reservations', group: 'storage.k8s.io', resource: 'storageclasses', verbs: ['get'], why: 'whether a sibling claim\'s class is this driver\'s, and its pool' },
  { feature: 'orphans', group: '', resource: 'persistentvolumes', verbs: ['list'], why: 'the volume handles the PVs name, to find this node\'s volumes that no PV names' },
  { feature: 'orphans', group: '', resource: 'events', verbs: ['create', 'patch'], why: 'an Event on this node\'s Node per orphaned volume, refreshed (patched) so it outlives the event TTL' },
];
