// The names of the driver's own metrics, apart from their registry so readers (kubectl lode) need not load the Prometheus client.

/** Names of the metrics DriverMetrics defines (the process_* and nodejs_* defaults come on top). */
export const METRIC_NAMES = {
  rpcTotal: 'lode_csi_rpc_total',
  rpcDuration: 'lode_csi_rpc_duration_seconds',
  poolCapacity: 'lode_pool_capacity_bytes',
  poolAllocated: 'lode_pool_allocated_bytes',
  poolAvailable: 'lode_pool_available_bytes',
  poolVolumes: 'lode_pool_volumes',
  poolSnapshots: 'lode_pool_snapshots',
  poolSnapshotBytes: 'lode_pool_snapshot_bytes',
  quarantinedVolumes: 'lode_quarantined_volumes',
  poolInfo: 'lode_pool_info',
  thinDataUsed: 'lode_thin_pool_data_used_ratio',
  thinMetadataUsed: 'lode_thin_pool_metadata_used_ratio',
  limitEscapable: 'lode_pool_limit_escapable',
  limitEscapes: 'lode_volume_limit_escapes_total',
  buildInfo: 'lode_build_info',
} as const;
