// What GetCapacity answers for a pool with some bytes free: the largest and smallest volume it can make, in the backend's allocation units.
import type { Backend } from '../../pool/backend.js';
import type { FsType } from '../../sys/filesystem.js';
import { DEFAULT_FS_TYPE, maximumNewVolumeBytes, minimumVolumeBytes } from './pool-fit.js';

export interface CapacityFigures {
  availableBytes: number;
  /** 0 when not even the smallest volume fits. */
  maximum: number;
  minimum: number;
}

/**
 * GetCapacity's figures (see maximumNewVolumeBytes for why the maximum drops to 0). The template
 * capacity (src/driver/cluster/template-capacity) answers with the same figures for an empty pool.
 */
export function capacityFigures(available: number, backend: Backend, fsType: FsType | ''): CapacityFigures {
  return { availableBytes: available, minimum: minimumVolumeBytes(backend, fsType || DEFAULT_FS_TYPE), maximum: maximumNewVolumeBytes(backend, available, fsType) };
}
