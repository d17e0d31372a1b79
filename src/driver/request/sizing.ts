// How big a new or grown volume is, from a CSI capacity range and the pool's limits.
import type { CapacityRange__Output } from '../../csi/types.js';
import type { PoolConfig } from '../../pool/pool.js';
import { humanBytes } from '../../util/quantity.js';
import { MiB, roundUp } from '../../pool/sizes.js';
import { outOfRange } from '../rpc/errors.js';
import { parseBytes } from './validate.js';

/** Below these, mkfs refuses or leaves too little room to be useful. */
export const MIN_VOLUME_BYTES = 16 * MiB;
export const MIN_XFS_VOLUME_BYTES = 300 * MiB;

export function minimumFor(fsType: string): number {
  return fsType === 'xfs' ? MIN_XFS_VOLUME_BYTES : MIN_VOLUME_BYTES;
}

export interface Range {
  required: number;
  /** 0 = no limit */
  limit: number;
}

export function readRange(range: CapacityRange__Output | null | undefined): Range {
  const required = parseBytes(range?.required_bytes, 'capacity_range.required_bytes');
  const limit = parseBytes(range?.limit_bytes, 'capacity_range.limit_bytes');
  if (limit > 0 && required > limit) {
    throw outOfRange(`capacity_range.required_bytes (${required}) is larger than limit_bytes (${limit})`);
  }
  return { required, limit };
}

/**
 * The size to give: at least what is required and `minimum` (see pool-fit.ts), rounded up to
 * whole MiB (4 KiB if a tight limit leaves no room for that), and always to whole `unit`s of
 * the pool's backend (an LVM extent); never over the limit. Whether this node's pool can hold
 * it is the caller's question: the answer differs per node.
 */
export function chooseSize(range: Range, pool: Pick<PoolConfig, 'defaultVolumeBytes'>, minimum: number, fsType: string, unit = 1): number {
  let wanted = range.required > 0 ? range.required : pool.defaultVolumeBytes;
  if (range.required === 0 && range.limit > 0) wanted = Math.min(wanted, range.limit);
  wanted = Math.max(wanted, minimum);
  let size = roundUp(wanted, Math.max(MiB, unit));
  if (range.limit > 0 && size > range.limit) size = roundUp(wanted, Math.max(4096, unit));
  if (range.limit > 0 && size > range.limit) {
    throw outOfRange(`limit_bytes ${range.limit} is below the smallest ${fsType || 'raw'} volume Lode makes (${humanBytes(minimum)})`);
  }
  if (!Number.isSafeInteger(size) || size > Number.MAX_SAFE_INTEGER / 2) throw outOfRange(`${range.required} bytes is beyond any pool`);
  return size;
}
