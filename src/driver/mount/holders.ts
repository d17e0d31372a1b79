// What still holds a volume on this node, read from the kernel: asked by DeleteVolume and by the orphan check before they delete.
import type { Backend } from '../../pool/backend.js';
import { volumePaths, type VolumeRecord } from '../../pool/volume-record.js';
import { mountAt, readMountTable } from '../../sys/mounts.js';
import { attachedDevice } from './materialise.js';

/**
 * What still uses the volume, by the kernel's state (records can be stale after a reboot): its
 * mounts, and for a staged raw block volume, whose staging path holds no mount, its attached device.
 */
export async function holdersOf(r: VolumeRecord, backend: Backend): Promise<string[]> {
  const mounts = await readMountTable();
  const held = volumePaths(r).filter((p) => mountAt(mounts, p) !== undefined);
  if (r.accessType === 'block' && r.staging !== null && !held.includes(r.staging) && (await attachedDevice(r, backend)) !== undefined) {
    held.push(r.staging);
  }
  return held;
}
