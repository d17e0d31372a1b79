// CreateVolume's volume_content_source: which snapshot or volume of this node a new volume is filled from, and what it demands of the new volume.
import type * as csi from '../../csi/types.js';
import type { Backend, VolumeSource } from '../../pool/backend.js';
import type { VolumeCatalog } from '../../catalog/volume-catalog.js';
import type { AccessType, VolumeRecord } from '../../pool/volume-record.js';
import type { FsType } from '../../sys/filesystem.js';
import { invalidArgument, notFound, outOfRange, resourceExhausted } from '../rpc/errors.js';
import { describeHolder, holderOf, type ObjectKind } from '../request/object-ids.js';
import { humanBytes } from '../../util/quantity.js';
import { requireVolumeId } from '../request/validate.js';

/** A source found on this node, with what a volume made from it must match. */
export interface ResolvedSource {
  source: VolumeSource;
  /** As CreateVolume named it, kept in the record and returned in the answer. */
  named: NonNullable<VolumeRecord['contentSource']>;
  id: string;
  pool: string;
  sizeBytes: number;
  accessType: AccessType;
  fsType: FsType | '';
  formatted: boolean;
  filesystemBytes?: number;
}

/**
 * Reads the source. One that lives on another node is RESOURCE_EXHAUSTED, the code the spec
 * gives to "cannot be provisioned with these topology constraints": csi-provisioner then lets
 * the scheduler choose again, and the message names the node to pin the pod to. One this node
 * should hold but does not is NOT_FOUND.
 */
export function resolveSource(src: csi.VolumeContentSource__Output, catalog: VolumeCatalog, nodeId: string): ResolvedSource {
  if (src.snapshot) {
    const id = requireVolumeId(src.snapshot.snapshot_id, 'volume_content_source.snapshot.snapshot_id', 'snapshot id');
    const snap = catalog.getSnapshot(id);
    if (snap === undefined || snap.state !== 'ready') throw elsewhere('snapshot', id, nodeId, 'a restore');
    return {
      source: { snapshot: snap }, named: { snapshot: id }, id, pool: snap.pool, sizeBytes: snap.sizeBytes, accessType: snap.accessType,
      fsType: snap.fsType, formatted: snap.formatted, ...(snap.filesystemBytes !== undefined ? { filesystemBytes: snap.filesystemBytes } : {}),
    };
  }
  if (src.volume) {
    const id = requireVolumeId(src.volume.volume_id, 'volume_content_source.volume.volume_id');
    const vol = catalog.get(id);
    if (vol === undefined || vol.state !== 'ready') throw elsewhere('volume', id, nodeId, 'a clone');
    if (vol.ephemeral) throw invalidArgument(`volume ${id} is an inline ephemeral volume, which cannot be cloned`);
    return {
      source: { volume: vol }, named: { volume: id }, id, pool: vol.pool, sizeBytes: vol.capacityBytes, accessType: vol.accessType,
      fsType: vol.fsType, formatted: vol.formatted, ...(vol.filesystemBytes !== undefined ? { filesystemBytes: vol.filesystemBytes } : {}),
    };
  }
  throw invalidArgument('volume_content_source names neither a snapshot nor a volume');
}

function elsewhere(kind: ObjectKind, id: string, nodeId: string, what: string): Error {
  const holder = holderOf(kind, id, nodeId);
  if (holder.kind === 'node' || holder.kind === 'hashed-node') {
    return resourceExhausted(`${kind} ${id} is held by ${describeHolder(holder)}, not ${nodeId}: ${what} is made only on the node holding its source; `
      + `pin the claim's pod to that node (docs/backends.md, "Snapshots, restores and clones")`);
  }
  return notFound(`${kind} ${id} does not exist on node ${nodeId}`);
}

/**
 * Checks the new volume against its source: the same pool (the copy shares its storage), one
 * that can copy, the same access type and filesystem, and room for all of the source's data.
 */
export function checkAgainstSource(s: ResolvedSource, pool: string, backend: Backend, accessType: AccessType, fsType: FsType | '', limitBytes: number): void {
  if (s.pool !== pool) throw invalidArgument(`the source ${s.id} is in pool ${s.pool}, so the new volume must be too (it asks for pool ${pool})`);
  if (backend.snapshots === undefined) throw invalidArgument(`pool ${pool} (backend ${backend.config.backend}) cannot clone volumes`);
  if (accessType !== s.accessType) throw invalidArgument(`the source ${s.id} is a ${s.accessType} volume; the new volume asks for ${accessType} access`);
  if (accessType === 'mount' && s.fsType !== '' && fsType !== s.fsType) {
    throw invalidArgument(`the source ${s.id} holds ${s.fsType}; the new volume asks for ${fsType}`);
  }
  if (limitBytes > 0 && limitBytes < s.sizeBytes) {
    throw outOfRange(`the source ${s.id} holds ${humanBytes(s.sizeBytes)}; limit_bytes ${limitBytes} is smaller`);
  }
}
