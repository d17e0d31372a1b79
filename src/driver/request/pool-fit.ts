// What a pool's backend accepts of a new volume: its access type, its filesystem, its smallest size.
import type { Backend } from '../../pool/backend.js';
import { MiB, roundUp } from '../../pool/sizes.js';
import type { AccessType } from '../../pool/volume-record.js';
import { FORMATTABLE_FS_TYPES, isFormattable, type FsType } from '../../sys/filesystem.js';
import { invalidArgument } from '../rpc/errors.js';
import { chooseSize, minimumFor, type Range } from './sizing.js';

/**
 * What these rules read of a pool: its configuration, what its backend can do and its
 * allocation unit. An open backend has them all; the planner (src/plan) gives the same
 * figures for pools that exist only on paper, so both size volumes with this one code.
 */
export type PoolShape = Pick<Backend, 'config' | 'capabilities' | 'allocationUnit'>;

/** The filesystem Lode formats a block volume with when nobody asks for one. */
export const DEFAULT_FS_TYPE = 'ext4';

/**
 * The filesystem a new volume of `backend` gets ('' for raw block), from what the caller
 * asked ('' = no preference). A directory pool's volumes are its own filesystem and never raw
 * block devices; a block pool formats ext4 or xfs. Anything else is the caller's mistake,
 * told with the pool's name so the StorageClass can be fixed.
 */
export function volumeFsType(backend: PoolShape, accessType: AccessType, asked: FsType | ''): FsType | '' {
  const name = backend.config.name;
  if (accessType === 'block') {
    if (!backend.capabilities.rawBlock) throw invalidArgument(`pool ${name} (backend ${backend.config.backend}) holds directories; it cannot give raw block volumes`);
    return '';
  }
  const fixed = backend.capabilities.fixedFsType;
  if (fixed !== undefined) {
    if (asked !== '' && asked !== fixed) throw invalidArgument(`pool ${name} (backend ${backend.config.backend}) holds ${fixed} directories; fs_type ${asked} cannot be given there`);
    return fixed as FsType;
  }
  const fsType = asked || DEFAULT_FS_TYPE;
  if (!isFormattable(fsType)) throw invalidArgument(`pool ${name} formats its volumes with ${FORMATTABLE_FS_TYPES.join(' or ')}, not ${fsType}`);
  return fsType;
}

/**
 * The smallest volume of `fsType` the pool makes: what mkfs needs on a block pool, 1 MiB of
 * quota on a directory pool; in whole allocation units of the backend.
 */
export function minimumVolumeBytes(backend: PoolShape, fsType: FsType | ''): number {
  return roundUp(backend.capabilities.needsFormat ? minimumFor(fsType) : MiB, backend.allocationUnit());
}

/**
 * The bytes a new volume of `fsType` takes in `backend`'s pool for `range`: its smallest size
 * (and a source's, when copied from one) rounded to the backend's allocation unit. CreateVolume
 * and the pod reservations size with it, so a reservation holds what the create will take.
 */
export function newVolumeBytes(backend: PoolShape, fsType: FsType | '', range: Range, sourceBytes = 0): number {
  const unit = backend.allocationUnit();
  const minimum = Math.max(minimumVolumeBytes(backend, fsType), sourceBytes);
  return Math.max(chooseSize(range, backend.config, minimum, fsType, unit), Math.ceil(minimum / unit) * unit);
}

/**
 * GetCapacity's maximum_volume_size for a pool with `available` bytes free: the largest volume
 * in whole allocation units (one of exactly that size is one the pool can make), within the
 * pool's max-volume-size; 0 when even the smallest volume of `fsType` no longer fits, since the
 * scheduler trusts this figure over available_capacity and no request may look as if it fits.
 */
export function maximumNewVolumeBytes(backend: PoolShape, available: number, fsType: FsType | ''): number {
  const minimum = minimumVolumeBytes(backend, fsType || DEFAULT_FS_TYPE);
  const unit = backend.allocationUnit();
  const largest = Math.floor(Math.min(available, backend.config.maxVolumeBytes ?? Number.MAX_SAFE_INTEGER) / unit) * unit;
  return available < minimum || largest < minimum ? 0 : largest;
}
