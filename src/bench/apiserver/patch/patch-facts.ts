// Which lists strategic merge patch merges, and on which key: the patchMergeKey/patchStrategy tags of the Go types, for the kinds the bench serves.
import type { Kind } from '../../api/kinds.js';

/** What the Go struct tags say about one field. A list without `merge` is replaced whole, as untagged lists are upstream. */
export interface FieldFacts {
  /** patchStrategy contains merge. */
  merge?: boolean;
  /** patchMergeKey: the field that identifies an item of a list of objects (absent for lists of scalars). */
  mergeKey?: string;
  /** patchStrategy contains retainKeys: the item's (or object's) `$retainKeys` clears the keys it does not name. */
  retainKeys?: boolean;
  /** The fields of the object (or of each list item) below. */
  fields?: Struct;
}

export type Struct = Record<string, FieldFacts>;

const conditions: FieldFacts = { merge: true, mergeKey: 'type' };

const objectMeta: Struct = {
  finalizers: { merge: true },
  ownerReferences: { merge: true, mergeKey: 'uid' },
};

const container: Struct = {
  ports: { merge: true, mergeKey: 'containerPort' },
  env: { merge: true, mergeKey: 'name' },
  volumeMounts: { merge: true, mergeKey: 'mountPath' },
  volumeDevices: { merge: true, mergeKey: 'devicePath' },
};

const podSpec: Struct = {
  volumes: { merge: true, mergeKey: 'name', retainKeys: true },
  initContainers: { merge: true, mergeKey: 'name', fields: container },
  containers: { merge: true, mergeKey: 'name', fields: container },
  ephemeralContainers: { merge: true, mergeKey: 'name', fields: container },
  imagePullSecrets: { merge: true, mergeKey: 'name' },
  hostAliases: { merge: true, mergeKey: 'ip' },
  topologySpreadConstraints: { merge: true, mergeKey: 'topologyKey' },
  resourceClaims: { merge: true, mergeKey: 'name', retainKeys: true },
  schedulingGates: { merge: true, mergeKey: 'name' },
};

const podStatus: Struct = {
  conditions,
  podIPs: { merge: true, mergeKey: 'ip' },
  hostIPs: { merge: true, mergeKey: 'ip' },
};

function root(spec?: Struct, status?: Struct): Struct {
  return {
    metadata: { fields: objectMeta },
    ...(spec ? { spec: { fields: spec } } : {}),
    ...(status ? { status: { fields: status } } : {}),
  };
}

/**
 * Built-in kinds with their facts. Kinds defined by CRDs (snapshot.storage.k8s.io) are
 * absent: upstream has no Go types for them and refuses strategic merge patches (415).
 */
const KINDS: Partial<Record<Kind, Struct>> = {
  Pod: root(podSpec, podStatus),
  StatefulSet: root({ template: { fields: { metadata: { fields: objectMeta }, spec: { fields: podSpec } } } }, { conditions }),
  Node: root({ podCIDRs: { merge: true } }, { conditions, addresses: { merge: true, mergeKey: 'type' } }),
  PersistentVolumeClaim: root(undefined, { conditions }),
  PersistentVolume: root(),
  StorageClass: root(),
  CSIDriver: root(),
  CSIStorageCapacity: root(),
  Namespace: root(undefined, { conditions }),
  Service: root({ ports: { merge: true, mergeKey: 'port' } }, { conditions }),
  Endpoints: root(),
  ConfigMap: root(),
  Secret: root(),
  ServiceAccount: { ...root(), secrets: { merge: true, mergeKey: 'name' } },
  LimitRange: root(),
  ResourceQuota: root(),
  Event: root(),
  Lease: root(),
  NetworkPolicy: root(),
  Ingress: root(),
  IngressClass: root(),
  PodDisruptionBudget: root(undefined, { conditions }),
  Role: root(),
  RoleBinding: root(),
  ClusterRole: root(),
  ClusterRoleBinding: root(),
  HorizontalPodAutoscaler: root(undefined, { conditions }),
  PriorityClass: root(),
};

/** The facts for a kind, or undefined when strategic merge does not apply to it. */
export function strategicFacts(kind: Kind): Struct | undefined {
  return KINDS[kind];
}
