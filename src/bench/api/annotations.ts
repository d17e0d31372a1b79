// Annotation, label, finalizer and reason names the controllers share, spelled exactly as upstream spells them.

export const ANN_SELECTED_NODE = 'volume.kubernetes.io/selected-node';
export const ANN_STORAGE_PROVISIONER = 'volume.kubernetes.io/storage-provisioner';
export const ANN_BETA_STORAGE_PROVISIONER = 'volume.beta.kubernetes.io/storage-provisioner';
export const ANN_BIND_COMPLETED = 'pv.kubernetes.io/bind-completed';
export const ANN_BOUND_BY_CONTROLLER = 'pv.kubernetes.io/bound-by-controller';
export const ANN_PROVISIONED_BY = 'pv.kubernetes.io/provisioned-by';
export const FINALIZER_PROVISIONER = 'external-provisioner.volume.kubernetes.io/finalizer';
export const FINALIZER_PVC_PROTECTION = 'kubernetes.io/pvc-protection';
export const FINALIZER_PV_PROTECTION = 'kubernetes.io/pv-protection';
export const NO_PROVISIONER = 'kubernetes.io/no-provisioner';

export const LABEL_CAPACITY_DRIVER = 'csi.storage.k8s.io/drivername';
export const LABEL_CAPACITY_MANAGED_BY = 'csi.storage.k8s.io/managed-by';
export const LABEL_HOSTNAME = 'kubernetes.io/hostname';
export const EPHEMERAL_CONTEXT_KEY = 'csi.storage.k8s.io/ephemeral';

/** Lode's own: topology key its driver reports, and the Node annotation the bench reads pool sizes from. */
export const LODE_TOPOLOGY_KEY = 'topology.lode.csi.dev/node';
export const ANN_LODE_POOLS = 'lode.csi.dev/pools';

/** VolumeBinding filter reasons (scheduler volumebinding plugin). */
export const REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind";
export const REASON_NODE_CONFLICT = 'node(s) had volume node affinity conflict';
export const REASON_NOT_ENOUGH_SPACE = 'node(s) did not have enough free storage';
export const REASON_PV_NOT_EXIST = 'node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)';
export const REASON_UNBOUND_IMMEDIATE = 'pod has unbound immediate PersistentVolumeClaims';
