// What GetCapacity answers for a pool with some bytes free: the largest and smallest volume it can make, in the backend's allocation units.
import type { Backend } from '../../pool/backend.js';
import type { FsType } from '../../sys/filesystem.js';
import { DEFAULT_FS_TYPE, minimumVolumeBytes } from './pool-fit.js';

export interface CapacityFigures {
  availableBytes: number;
  /** 0 when not even the smallest volume fits. */
  maximum: number;
  minimum: number;
}

/**
 * The scheduler trusts maximum_volume_size over available_capacity: when even the smallest
 * volume of this filesystem no longer fits, no request may look as if it would. In whole
 * allocation units: a volume of exactly the maximum is one the pool can make. The template
 * capacity (src/driver/cluster/template-capacity) answers with the same figures for an empty pool.
 */
export function capacityFigures(available: number, backend: Backend, fsType: FsType | ''): CapacityFigures {
  const minimum = minimumVolumeBytes(backend, fsType || DEFAULT_FS_TYPE);
  const unit = backend.allocationUnit();
  const largest = Math.floor(Math.min(available, backend.config.maxVolumeBytes ?? Number.MAX_SAFE_INTEGER) / unit) * unit;
  return { availableBytes: available, minimum, maximum: available < minimum || largest < minimum ? 0 : largest };
}
