// Every API request the driver makes, by feature, and where each feature's permissions are installed: deploy/base/rbac.yaml for the default features, deploy/components/node-loss for the opt-in one; a test keeps the roles equal to this list.
import { nodeLossLeaseName } from './node-loss/node-loss-options.js';
import { templateCapacityLeaseName } from './template-capacity/template-capacity.js';

export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete';

export type ApiFeature = 'api-access' | 'pod-reservations' | 'node-loss' | 'claim-reasons' | 'orphans' | 'limit-reports' | 'pool-profiles' | 'template-capacity';

/**
 * Where a feature's roles ship. 'base': deploy/base, on with API access. A kustomize component
 * (deploy/components/<name>): the feature deletes or changes objects of other nodes, so it is
 * opt-in, with roles of its own that only that component binds; deploy/base switches it off.
 */
export const FEATURE_INSTALL: Readonly<Record<ApiFeature, 'base' | 'components/node-loss'>> = {
  'api-access': 'base',
  'pod-reservations': 'base',
  orphans: 'base',
  'limit-reports': 'base',
  'pool-profiles': 'base',
  'template-capacity': 'base',
  'node-loss': 'components/node-loss',
  // It runs on the node-loss leader (one look for the cluster), which only the component elects.
  'claim-reasons': 'components/node-loss',
};

export interface Permission {
  feature: ApiFeature;
  /** '' for the core group. */
  group: string;
  /** Plural, with '/subresource' where the request names one. */
  resource: string;
  verbs: readonly Verb[];
  /**
   * 'cluster' (a ClusterRole) unless the objects live only in the driver's own namespace (a
   * Role there): the capacity objects and the leader-election Lease.
   */
  scope?: 'cluster' | 'own-namespace';
  /** Objects the permission is limited to, where their names are known in advance. */
  resourceNames?: readonly string[];
  /** What the feature does with it, said in the ClusterRole's comment. */
  why: string;
}

/** One entry per (feature, group, resource); a request the code makes outside this list is a bug the RBAC test reports. */
export const PERMISSIONS: readonly Permission[] = [
  { feature: 'api-access', group: '', resource: 'nodes', verbs: ['get'], why: 'start-up check of the credentials: this node\'s own Node object' },
  { feature: 'node-loss', group: 'coordination.k8s.io', resource: 'leases', verbs: ['create'], scope: 'own-namespace', why: 'leader election: the first candidate creates the Lease (a create cannot be limited by name)' },
  { feature: 'node-loss', group: 'coordination.k8s.io', resource: 'leases', verbs: ['get', 'update', 'watch'], scope: 'own-namespace', resourceNames: [nodeLossLeaseName('lode.csi.dev')], why: 'leader election: one node\'s driver runs the node-loss handler; the Lease is named after the driver; followers watch it (by a metadata.name field selector, which the name limit covers) instead of reading it every 2 s' },
  { feature: 'node-loss', group: '', resource: 'nodes', verbs: ['get', 'list', 'watch'], why: 'find deleted nodes and nodes with the out-of-service taint (the leader lists them once and watches), and look again before releasing anything of one' },
  { feature: 'node-loss', group: '', resource: 'persistentvolumes', verbs: ['get', 'list', 'watch', 'update', 'delete'], why: 'find the lost node\'s volumes (the leader lists them once and watches; claim reasons read the same cache); drop the dead provisioner\'s finalizer and delete them' },
  { feature: 'node-loss', group: '', resource: 'persistentvolumeclaims', verbs: ['get', 'delete'], why: 'delete the claim bound to a lost volume (uid-checked) so a new one is provisioned' },
  { feature: 'node-loss', group: '', resource: 'pods', verbs: ['list', 'delete'], why: 'force-delete the lost node\'s pods that use such a claim, so their controller recreates them' },
  { feature: 'node-loss', group: 'storage.k8s.io', resource: 'storageclasses', verbs: ['get'], why: 'the per-class opt-in (parameter onNodeLoss: delete-claims)' },
  { feature: 'node-loss', group: 'storage.k8s.io', resource: 'csistoragecapacities', verbs: ['list', 'watch', 'delete'], scope: 'own-namespace', why: 'delete the lost node\'s stale capacity objects (the leader lists them once and watches; claim reasons read the same cache)' },
  { feature: 'node-loss', group: '', resource: 'events', verbs: ['create'], why: 'an Event on every object the handler touches, or would touch in dry run' },
  { feature: 'claim-reasons', group: '', resource: 'persistentvolumeclaims', verbs: ['list', 'watch'], why: 'the leader\'s look for waiting claims of the driver\'s classes (listed once, then watched)' },
  { feature: 'claim-reasons', group: 'storage.k8s.io', resource: 'storageclasses', verbs: ['list', 'watch'], why: 'which classes are the driver\'s, the pool and filesystem each names (listed once, then watched)' },
  { feature: 'claim-reasons', group: '', resource: 'events', verbs: ['create'], why: 'one Warning Event on a claim whose class\'s pool is on no node, or whose size is below its filesystem\'s minimum' },
  { feature: 'pod-reservations', group: '', resource: 'pods', verbs: ['get', 'list'], why: 'the pending pods using a claim being created; whether a pod holding a reservation still waits' },
  { feature: 'pod-reservations', group: '', resource: 'persistentvolumeclaims', verbs: ['get'], why: 'a pending pod\'s other claims: bound yet, selected node, size' },
  { feature: 'pod-reservations', group: 'storage.k8s.io', resource: 'storageclasses', verbs: ['get'], why: 'whether a sibling claim\'s class is this driver\'s, and its pool' },
  { feature: 'pod-reservations', group: '', resource: 'persistentvolumes', verbs: ['get'], why: 'whether a bound sibling\'s volume is this driver\'s on another node' },
  { feature: 'orphans', group: '', resource: 'persistentvolumes', verbs: ['list', 'watch'], why: 'the volume handles the PVs name (listed once, then watched), to find this node\'s volumes that no PV names' },
  { feature: 'orphans', group: '', resource: 'events', verbs: ['get', 'create', 'patch'], why: 'an Event on this node\'s Node per orphaned volume, repeats counted (patched: count, lastTimestamp) as upstream recorders count them, so it outlives the event TTL; read (get) once when a restarted driver finds its Event there' },
  { feature: 'limit-reports', group: '', resource: 'events', verbs: ['get', 'create', 'patch'], why: 'an Event on this node\'s Node per pool whose volumes\' writers can get past their limits, and per volume whose writer did, refreshed (patched) likewise' },
  { feature: 'pool-profiles', group: '', resource: 'nodes', verbs: ['get', 'list', 'watch'], why: 'pool profiles: the profile label of this node\'s own Node, read at start (get), then followed through a list and watch of that one Node (a metadata.name field selector; RBAC cannot limit a list by it)' },
  { feature: 'pool-profiles', group: '', resource: 'events', verbs: ['get', 'create', 'patch'], why: 'an Event on this node\'s Node per pool a profile added, and per refused change of a pool holding volumes, refreshed (patched) likewise' },
  { feature: 'template-capacity', group: 'coordination.k8s.io', resource: 'leases', verbs: ['create'], scope: 'own-namespace', why: 'leader election: the first candidate creates the template capacity Lease (a create cannot be limited by name)' },
  { feature: 'template-capacity', group: 'coordination.k8s.io', resource: 'leases', verbs: ['get', 'update', 'watch'], scope: 'own-namespace', resourceNames: [templateCapacityLeaseName('lode.csi.dev')], why: 'leader election: one node\'s driver publishes the template capacity; the Lease, named after the driver, owns the objects; followers watch it by name' },
  { feature: 'template-capacity', group: 'storage.k8s.io', resource: 'storageclasses', verbs: ['list', 'watch'], why: 'the driver\'s classes that bind on first consumer (listed once, then watched): one capacity object per profile and class' },
  { feature: 'template-capacity', group: 'storage.k8s.io', resource: 'csistoragecapacities', verbs: ['list', 'watch', 'create', 'update', 'delete'], scope: 'own-namespace', why: 'the template capacity objects (labelled managed-by lode-template-capacity; csi-provisioner leaves them alone): made, kept current, deleted when their profile or class goes' },
];

/** The permissions installed at one place (deploy/base, or a component), in catalogue order. */
export function permissionsAt(place: (typeof FEATURE_INSTALL)[ApiFeature]): Permission[] {
  return PERMISSIONS.filter((p) => FEATURE_INSTALL[p.feature] === place);
}
