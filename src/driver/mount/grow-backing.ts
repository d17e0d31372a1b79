// Growing a volume's backing storage, shared by ControllerExpandVolume and NodeExpandVolume.
import type { VolumeCatalog } from '../../catalog/volume-catalog.js';
import type { VolumeRecord } from '../../pool/volume-record.js';
import { failedPrecondition, outOfRange } from '../rpc/errors.js';
import { minimumVolumeBytes } from '../request/pool-fit.js';
import { chooseSize, type Range } from '../request/sizing.js';

/**
 * Grows the volume's storage to at least `range.required` (never shrinks). An attached device keeps its
 * old size until the caller refreshes it (materialise.ts); the filesystem is the caller's business too.
 * The caller holds the volume's lock.
 */
export async function growBacking(catalog: VolumeCatalog, r: VolumeRecord, range: Range): Promise<void> {
  if (r.ephemeral) throw failedPrecondition(`volume ${r.id} is an inline ephemeral volume and cannot be expanded`);
  if (range.limit > 0 && r.capacityBytes > range.limit) {
    throw outOfRange(`volume ${r.id} already has ${r.capacityBytes} bytes, over limit_bytes ${range.limit}; volumes never shrink`);
  }
  const backend = catalog.pool(r.pool);
  const size = chooseSize({ required: Math.max(range.required, r.capacityBytes), limit: range.limit }, backend.config, minimumVolumeBytes(backend, r.fsType), r.fsType, backend.allocationUnit());
  if (size <= r.capacityBytes) return;
  // A full pool: PoolFullError, answered RESOURCE_EXHAUSTED; past max-volume-size: OUT_OF_RANGE.
  await catalog.grow(r, size);
}
