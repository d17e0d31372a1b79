// The registry of every resource the bench's API holds: group, version, plural, scope, and whether a controller acts on it.
import type { Kind, ModelledKind, StoredOnlyKind } from './kinds.js';

/**
 * One served resource type, as API discovery describes it. `modelled` kinds are the ones the
 * bench's controllers act on; the others are stored and served (so a chart's Services,
 * Secrets or a leader-election Lease load and can be read back) but nothing reacts to them,
 * and a run says so.
 */
export interface ResourceType {
  kind: Kind;
  /** '' for the core group. */
  group: string;
  version: string;
  /** `group/version`, or `version` for the core group: the objects' apiVersion. */
  apiVersion: string;
  plural: string;
  singular: string;
  namespaced: boolean;
  shortNames: string[];
  categories: string[];
  /** Whether `status` is a subresource (writes to the main resource then leave status alone). */
  statusSubresource: boolean;
  modelled: boolean;
  /** Other apiVersions a manifest may name for this kind (older served versions). */
  alsoAccepted: string[];
}

type Entry = [apiVersion: string, plural: string, namespaced: boolean, shortNames: string[], status: boolean, extra?: { categories?: string[]; alsoAccepted?: string[] }];

/** Kinds the controllers act on (a record, so the compiler insists every kind is registered). Plurals, short names and scopes as the API server registers them. */
const MODELLED_ENTRIES: Record<ModelledKind, Entry> = {
  Node: ['v1', 'nodes', false, ['no'], true],
  StorageClass: ['storage.k8s.io/v1', 'storageclasses', false, ['sc'], false],
  CSIDriver: ['storage.k8s.io/v1', 'csidrivers', false, [], false],
  PersistentVolume: ['v1', 'persistentvolumes', false, ['pv'], true],
  PersistentVolumeClaim: ['v1', 'persistentvolumeclaims', true, ['pvc'], true],
  Pod: ['v1', 'pods', true, ['po'], true, { categories: ['all'] }],
  StatefulSet: ['apps/v1', 'statefulsets', true, ['sts'], true, { categories: ['all'] }],
  CSIStorageCapacity: ['storage.k8s.io/v1', 'csistoragecapacities', true, [], false, { alsoAccepted: ['storage.k8s.io/v1beta1'] }],
  VolumeSnapshotClass: ['snapshot.storage.k8s.io/v1', 'volumesnapshotclasses', false, ['vsclass', 'vsclasses'], false],
  VolumeSnapshot: ['snapshot.storage.k8s.io/v1', 'volumesnapshots', true, ['vs'], true],
  VolumeSnapshotContent: ['snapshot.storage.k8s.io/v1', 'volumesnapshotcontents', false, ['vsc', 'vscs'], true],
};

/** Kinds that do not touch storage: stored and served, not acted upon. */
const STORED_ENTRIES: Record<StoredOnlyKind, Entry> = {
  Namespace: ['v1', 'namespaces', false, ['ns'], true],
  Service: ['v1', 'services', true, ['svc'], true, { categories: ['all'] }],
  Endpoints: ['v1', 'endpoints', true, ['ep'], false],
  ConfigMap: ['v1', 'configmaps', true, ['cm'], false],
  Secret: ['v1', 'secrets', true, [], false],
  ServiceAccount: ['v1', 'serviceaccounts', true, ['sa'], false],
  LimitRange: ['v1', 'limitranges', true, ['limits'], false],
  ResourceQuota: ['v1', 'resourcequotas', true, ['quota'], true],
  Event: ['v1', 'events', true, ['ev'], false],
  Lease: ['coordination.k8s.io/v1', 'leases', true, [], false],
  NetworkPolicy: ['networking.k8s.io/v1', 'networkpolicies', true, ['netpol'], false],
  Ingress: ['networking.k8s.io/v1', 'ingresses', true, ['ing'], true],
  IngressClass: ['networking.k8s.io/v1', 'ingressclasses', false, [], false],
  PodDisruptionBudget: ['policy/v1', 'poddisruptionbudgets', true, ['pdb'], true],
  Role: ['rbac.authorization.k8s.io/v1', 'roles', true, [], false],
  RoleBinding: ['rbac.authorization.k8s.io/v1', 'rolebindings', true, [], false],
  ClusterRole: ['rbac.authorization.k8s.io/v1', 'clusterroles', false, [], false],
  ClusterRoleBinding: ['rbac.authorization.k8s.io/v1', 'clusterrolebindings', false, [], false],
  HorizontalPodAutoscaler: ['autoscaling/v2', 'horizontalpodautoscalers', true, ['hpa'], true, { categories: ['all'] }],
  PriorityClass: ['scheduling.k8s.io/v1', 'priorityclasses', false, ['pc'], false],
  // Written by each node's kubelet when a CSI driver registers; read by csi-provisioner --strict-topology for the topology keys.
  CSINode: ['storage.k8s.io/v1', 'csinodes', false, [], false],
};

function build(kind: Kind, e: Entry, modelled: boolean): ResourceType {
  const [apiVersion, plural, namespaced, shortNames, statusSubresource, extra] = e;
  const slash = apiVersion.indexOf('/');
  return {
    kind, apiVersion, plural, namespaced, shortNames, statusSubresource, modelled,
    group: slash < 0 ? '' : apiVersion.slice(0, slash),
    version: slash < 0 ? apiVersion : apiVersion.slice(slash + 1),
    singular: kind.toLowerCase(),
    categories: extra?.categories ?? [],
    alsoAccepted: extra?.alsoAccepted ?? [],
  };
}

export const RESOURCES: readonly ResourceType[] = [
  ...Object.entries(MODELLED_ENTRIES).map(([k, e]) => build(k as Kind, e, true)),
  ...Object.entries(STORED_ENTRIES).map(([k, e]) => build(k as Kind, e, false)),
];

const BY_KIND = new Map(RESOURCES.map((r) => [r.kind, r]));

export function resourceForKind(kind: string): ResourceType | undefined {
  return BY_KIND.get(kind as Kind);
}

/** The resource served at /apis/GROUP/VERSION/PLURAL (group '' = /api/VERSION). */
export function resourceFor(group: string, version: string, plural: string): ResourceType | undefined {
  return RESOURCES.find((r) => r.group === group && r.version === version && r.plural === plural);
}

function registered(kind: Kind): ResourceType {
  const r = resourceForKind(kind);
  if (r === undefined) throw new Error(`kind ${kind} is missing from the resource registry`);
  return r;
}

export const KINDS = RESOURCES.map((r) => r.kind as Kind);
export const MODELLED_KINDS = RESOURCES.filter((r) => r.modelled).map((r) => r.kind as ModelledKind);

/** apiVersion each kind is served under. */
export const API_VERSIONS = Object.fromEntries(KINDS.map((k) => [k, registered(k).apiVersion])) as Record<Kind, string>;

export const NAMESPACED = Object.fromEntries(KINDS.map((k) => [k, registered(k).namespaced])) as Record<Kind, boolean>;

export function isKind(s: unknown): s is Kind {
  return typeof s === 'string' && (KINDS as string[]).includes(s);
}

export function isModelledKind(s: unknown): s is ModelledKind {
  return typeof s === 'string' && (MODELLED_KINDS as string[]).includes(s);
}
