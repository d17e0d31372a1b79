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
  { feature: 'node-loss', group: 'coordination.k8s.io', resource: 'leases', verbs: ['get', 'create', 'update'], why: 'leader election: one node\'s driver runs the node-loss handler' },
  { feature: 'node-loss', group: '', resource: 'nodes', verbs: ['list'], why: 'find deleted nodes and nodes with the out-of-service taint' },
  { feature: 'node-loss', group: '', resource: 'persistentvolumes', verbs: ['list', 'update', 'delete'], why: 'find the lost node\'s volumes; drop the dead provisioner\'s finalizer and delete them' },
  { feature: 'node-loss', group: '', resource: 'persistentvolumeclaims', verbs: ['get', 'delete'], why: 'delete the claim bound to a lost volume (uid-checked) so a new one is provisioned' },
  { feature: 'node-loss', group: '', resource: 'pods', verbs: ['list', 'delete'], why: 'force-delete the lost node\'s pods that use such a claim, so their controller recreates them' },
  { feature: 'node-loss', group: 'storage.k8s.io', resource: 'storageclasses', verbs: ['get'], why: 'the per-class opt-in (parameter onNodeLoss: delete-claims)' },
  { feature: 'node-loss', group: 'storage.k8s.io', resource: 'csistoragecapacities', verbs: ['list', 'delete'], why: 'delete the lost node\'s stale capacity objects' },
  { feature: 'node-loss', group: '', resource: 'events', verbs: ['create'], why: 'an Event on every object the handler touches, or would touch in dry run' },
];
