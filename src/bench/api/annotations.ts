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
/** The label cluster-autoscaler 1.36 puts on the template nodes of its scale-up simulation (kubernetes/autoscaler PR #9702). */
export const LABEL_TEMPLATE_NODE = 'cluster-autoscaler.kubernetes.io/template-node';
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

/** external-snapshotter (pkg/utils/util.go) and external-provisioner (pkg/controller/controller.go) names. */
export const FINALIZER_CONTENT_BOUND = 'snapshot.storage.kubernetes.io/volumesnapshotcontent-bound-protection';
export const FINALIZER_SNAPSHOT_BOUND = 'snapshot.storage.kubernetes.io/volumesnapshot-bound-protection';
export const FINALIZER_SNAPSHOT_AS_SOURCE = 'snapshot.storage.kubernetes.io/volumesnapshot-as-source-protection';
export const FINALIZER_PVC_AS_SNAPSHOT_SOURCE = 'snapshot.storage.kubernetes.io/pvc-as-source-protection';
export const FINALIZER_PROVISIONER_SNAPSHOT_SOURCE = 'provisioner.storage.kubernetes.io/volumesnapshot-as-source-protection';
export const FINALIZER_CLONE_PROTECTION = 'provisioner.storage.kubernetes.io/cloning-protection';
export const ANN_SNAPSHOT_BEING_DELETED = 'snapshot.storage.kubernetes.io/volumesnapshot-being-deleted';
export const ANN_SNAPSHOT_BEING_CREATED = 'snapshot.storage.kubernetes.io/volumesnapshot-being-created';
export const ANN_DEFAULT_SNAPSHOT_CLASS = 'snapshot.storage.kubernetes.io/is-default-class';
export const LABEL_SNAPSHOT_MANAGED_BY = 'snapshot.storage.kubernetes.io/managed-by';

/** The bench's own: pod annotations that make its kubelet write, or expect, a volume's data (see docs/bench.md). */
export const ANN_BENCH_WRITE_DATA = 'bench.lode.csi.dev/write-data';
export const ANN_BENCH_EXPECT_DATA = 'bench.lode.csi.dev/expect-data';
