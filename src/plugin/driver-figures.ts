// What one driver's /metrics says about its node that the API does not: its version and, per pool, backend, size, allocated and available bytes, thin pool fill and quarantined volumes.
import { METRIC_NAMES } from '../metrics/metric-names.js';
import type { ExpositionSample } from '../metrics/exposition-text.js';

/** One pool as its driver exports it; null where the driver exports no such series (thin fill for a pool that is not thin). */
export interface PoolFigures {
  backend: string;
  sizeBytes: number | null;
  allocatedBytes: number | null;
  availableBytes: number | null;
  /** 0 to 1; lvm thin pools only. */
  thinDataUsed: number | null;
  thinMetadataUsed: number | null;
  quarantinedVolumes: number | null;
}

export interface DriverFigures {
  /** lode_build_info's version; null for a driver from before it was exported. */
  version: string | null;
  pools: Record<string, PoolFigures>;
}

const POOL_FIELDS: ReadonlyArray<[string, keyof Omit<PoolFigures, 'backend'>]> = [
  [METRIC_NAMES.poolCapacity, 'sizeBytes'],
  [METRIC_NAMES.poolAllocated, 'allocatedBytes'],
  [METRIC_NAMES.poolAvailable, 'availableBytes'],
  [METRIC_NAMES.thinDataUsed, 'thinDataUsed'],
  [METRIC_NAMES.thinMetadataUsed, 'thinMetadataUsed'],
  [METRIC_NAMES.quarantinedVolumes, 'quarantinedVolumes'],
];

/**
 * The figures of the driver named `driverName` among the samples (series of another driver
 * name, should a pod serve two, are left out; series without the label are taken).
 */
export function driverFigures(samples: readonly ExpositionSample[], driverName: string): DriverFigures {
  const mine = samples.filter((s) => s.labels['driver_name'] === undefined || s.labels['driver_name'] === driverName);
  const pools: Record<string, PoolFigures> = {};
  const pool = (name: string, backend: string): PoolFigures => {
    pools[name] ??= { backend, sizeBytes: null, allocatedBytes: null, availableBytes: null, thinDataUsed: null, thinMetadataUsed: null, quarantinedVolumes: null };
    return pools[name];
  };
  for (const s of mine) if (s.name === METRIC_NAMES.poolInfo && s.labels['pool'] !== undefined) pool(s.labels['pool'], s.labels['backend'] ?? '');
  const field = new Map(POOL_FIELDS);
  for (const s of mine) {
    const f = field.get(s.name);
    const name = s.labels['pool'];
    if (f === undefined || name === undefined) continue;
    pool(name, s.labels['backend'] ?? '')[f] = s.value;
  }
  const version = mine.find((s) => s.name === METRIC_NAMES.buildInfo)?.labels['version'] ?? null;
  return { version, pools };
}
