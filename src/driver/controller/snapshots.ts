// The CSI snapshot calls for this node's pools: CreateSnapshot, DeleteSnapshot and ListSnapshots.
import type * as csi from '../../csi/types.js';
import type { SnapshotRecord } from '../../pool/snapshot-record.js';
import { nowWithNanos, SNAPSHOT_RECORD_VERSION } from '../../pool/snapshot-record.js';
import { freezePathFor } from '../mount/consistent-copy.js';
import type { DriverContext } from '../context/context.js';
import { alreadyExists, failedPrecondition, invalidArgument, notFound } from '../rpc/errors.js';
import { describeHolder, holderOf, objectIdForName } from '../request/object-ids.js';
import { KUBERNETES_PREFIX } from '../request/parameters.js';
import { pageOf } from '../rpc/paging.js';
import { printable } from '../rpc/printable.js';
import { requireName, requireVolumeId } from '../request/validate.js';

/** Whether any pool of this node can snapshot: the snapshot and clone capabilities are advertised only then. */
export function canSnapshot(ctx: DriverContext): boolean {
  return ctx.catalog.poolNames().some((name) => ctx.catalog.pool(name).snapshots !== undefined);
}

export function toCsiSnapshot(s: SnapshotRecord): csi.Snapshot {
  return {
    snapshot_id: s.id,
    source_volume_id: s.sourceVolumeId,
    size_bytes: String(s.sizeBytes),
    creation_time: { seconds: String(Math.floor(Date.parse(s.createdAt) / 1000)), nanos: s.createdNanos },
    ready_to_use: s.state === 'ready',
  };
}

/** A snapshot id as a caller sends one: the same characters and bound as volume ids. */
export function requireSnapshotId(id: string, field: string): string {
  return requireVolumeId(id, field, 'snapshot id');
}

/**
 * VolumeSnapshotClass parameters: Lode reads none yet, so any key but the ones Kubernetes adds
 * (csi-snapshotter's --extra-create-metadata names) is a mistake worth saying.
 */
function checkSnapshotParameters(map: Record<string, string>): void {
  for (const key of Object.keys(map)) {
    if (!key.startsWith(KUBERNETES_PREFIX)) throw invalidArgument(`unknown snapshot parameter "${printable(key)}" (Lode reads none; ${KUBERNETES_PREFIX}* keys are accepted)`);
  }
}

export async function createSnapshot(ctx: DriverContext, req: csi.CreateSnapshotRequest__Output): Promise<csi.CreateSnapshotResponse> {
  const { catalog } = ctx;
  const nodeId = ctx.config.nodeId;
  const name = requireName(req.name);
  const sourceId = requireVolumeId(req.source_volume_id, 'source_volume_id');
  checkSnapshotParameters(req.parameters);
  const id = objectIdForName('snapshot', name, nodeId);
  return ctx.locks.with([id, sourceId], async () => {
    let existing = catalog.getSnapshot(id);
    // Under the lock nothing else works on this name: a record not ready is a failed undo; finish it.
    if (existing !== undefined && existing.state !== 'ready') {
      await catalog.destroySnapshot(existing);
      existing = undefined;
    }
    if (existing !== undefined) {
      if (existing.sourceVolumeId !== sourceId) {
        throw alreadyExists(`snapshot "${name}" already exists, of volume ${existing.sourceVolumeId}, not ${sourceId}`);
      }
      return { snapshot: toCsiSnapshot(existing) };
    }
    const source = catalog.get(sourceId);
    if (source === undefined || source.state !== 'ready') {
      const holder = holderOf('volume', sourceId, nodeId);
      const where = holder.kind === 'this-node' || holder.kind === 'unknown' ? '' : `; the id names ${describeHolder(holder)}, which is where its snapshots are taken`;
      throw notFound(`volume ${sourceId} does not exist on node ${nodeId}${where}`);
    }
    if (source.ephemeral) throw invalidArgument(`volume ${sourceId} is an inline ephemeral volume, which has no snapshots`);
    const backend = catalog.pool(source.pool);
    const support = backend.snapshots;
    if (support === undefined) {
      throw failedPrecondition(`pool ${source.pool} (backend ${backend.config.backend}) cannot snapshot; docs/backends.md lists the backends that can`);
    }
    const freezePath = await freezePathFor(source, backend, support);
    const snap: SnapshotRecord = {
      version: SNAPSHOT_RECORD_VERSION, id, name, pool: source.pool, sourceVolumeId: sourceId, sizeBytes: source.capacityBytes, chargedBytes: 0,
      accessType: source.accessType, fsType: source.fsType, formatted: source.formatted, state: 'creating', ...nowWithNanos(),
      ...(source.filesystemBytes !== undefined ? { filesystemBytes: source.filesystemBytes } : {}),
    };
    // A full pool answers RESOURCE_EXHAUSTED (PoolFullError), as for volumes.
    await catalog.createSnapshot(snap, source, freezePath);
    return { snapshot: toCsiSnapshot(snap) };
  });
}

export async function deleteSnapshot(ctx: DriverContext, req: csi.DeleteSnapshotRequest__Output): Promise<csi.DeleteSnapshotResponse> {
  const { catalog } = ctx;
  const nodeId = ctx.config.nodeId;
  const id = requireSnapshotId(req.snapshot_id, 'snapshot_id');
  return ctx.locks.with([id], async () => {
    const snap = catalog.getSnapshot(id);
    if (snap === undefined) {
      // Gone is success, but not for a snapshot that lives on another node: an OK there
      // would let Kubernetes forget a snapshot that still takes that node's space.
      const holder = holderOf('snapshot', id, nodeId);
      if (holder.kind === 'node' || holder.kind === 'hashed-node') {
        throw failedPrecondition(`snapshot ${id} is held by ${describeHolder(holder)}, not ${nodeId}; it is deleted there`);
      }
      return {};
    }
    await catalog.destroySnapshot(snap);
    return {};
  });
}

export async function listSnapshots(ctx: DriverContext, req: csi.ListSnapshotsRequest__Output): Promise<csi.ListSnapshotsResponse> {
  const { catalog } = ctx;
  const byId = req.snapshot_id === '' ? undefined : requireSnapshotId(req.snapshot_id, 'snapshot_id');
  const bySource = req.source_volume_id === '' ? undefined : requireVolumeId(req.source_volume_id, 'source_volume_id');
  // An unknown id in a filter is an empty list, not an error (the spec's ListSnapshots has no NOT_FOUND).
  const all = catalog.listSnapshots().filter((s) => s.state === 'ready' && (byId === undefined || s.id === byId)
    && (bySource === undefined || s.sourceVolumeId === bySource));
  const { page, nextToken } = pageOf(all, req.max_entries, req.starting_token, 'snapshot');
  return { entries: page.map((s) => ({ snapshot: toCsiSnapshot(s) })), next_token: nextToken };
}
