// NodeStageVolume and NodeUnstageVolume: make the volume appear at the staging path (see materialise.ts), and undo it.
import type * as csi from '../../csi/types.js';
import { humanBytes } from '../../util/quantity.js';
import type { Backend } from '../../pool/backend.js';
import type { Publication, VolumeRecord } from '../../pool/volume-record.js';
import { PathChanged } from '../../sys/beneath.js';
import { mountAt, readMountTable, unmountRef, type MountEntry } from '../../sys/mounts.js';
import { failpoint } from '../../util/failpoint.js';
import { log } from '../../util/log.js';
import { isReadOnlyMode, requireCapability } from '../request/capability.js';
import { alreadyExists, failedPrecondition, invalidArgument, notFound } from '../rpc/errors.js';
import { attachedDevice, isVolumeMount, mountVolume, releaseFromNode, stageDevice, strayVolumeMounts, undoAttach } from '../mount/materialise.js';
import { endsReadOnly, readOnlyMount, sameFlags } from '../mount/mount-options.js';
import type { NodeKit } from './kit.js';
import { DEFAULT_FS_TYPE, volumeFsType } from '../request/pool-fit.js';
import { minimumFor } from '../request/sizing.js';
import { requireVolumeId } from '../request/validate.js';

export async function stage(kit: NodeKit, req: csi.NodeStageVolumeRequest__Output): Promise<csi.NodeStageVolumeResponse> {
  const id = requireVolumeId(req.volume_id);
  const cap = requireCapability(req.volume_capability, 'volume_capability');
  const staging = kit.resolve(req.staging_target_path, 'staging_target_path');
  return kit.withLocks(id, [staging], async () => {
    const r = kit.volume(id);
    // One look at the mount table per call: the checks below all read the same snapshot.
    const mounts = await readMountTable();
    if (r.ephemeral) throw failedPrecondition(`volume ${id} is an inline ephemeral volume; it is never staged`);
    if (cap.accessType !== r.accessType) throw invalidArgument(`volume ${id} was created for ${r.accessType} access, not ${cap.accessType}`);
    const backend = kit.catalog.pool(r.pool);
    if (r.staging !== null && r.staging !== staging) {
      const stillThere = r.accessType === 'mount' ? mountAt(mounts, r.staging) : await attachedDevice(r, backend);
      if (stillThere) throw failedPrecondition(`volume ${id} is already staged at ${r.staging}`);
    }
    // Only a stage that moves the volume would forget a stray mount; a retry at the recorded path
    // records nothing new. A publish killed between its bind and its record leaves such a mount at
    // its target, and kubelet's retry after the restart stages again before it publishes (which
    // then adopts the mount): refusing here would keep that pod from its volume for good.
    if (r.staging !== staging) await refuseStray(mounts, r, backend, staging);
    // A filesystem the pool can never give (one Lode does not make, another than a directory
    // pool's own) is the caller's mistake; one other than the volume already holds is the volume's state.
    if (r.accessType === 'mount' && cap.fsType !== '') volumeFsType(backend, 'mount', cap.fsType);
    const fsType = r.accessType === 'block' ? '' : (cap.fsType || r.fsType || DEFAULT_FS_TYPE);
    if (r.formatted && fsType !== r.fsType) throw failedPrecondition(`volume ${id} holds ${r.fsType}; it cannot be staged as ${fsType}`);
    if (!r.formatted && fsType !== '' && r.capacityBytes < minimumFor(fsType)) {
      throw invalidArgument(`volume ${id} has ${humanBytes(r.capacityBytes)}; ${fsType} needs at least ${humanBytes(minimumFor(fsType))} (volume_capability.mount.fs_type)`);
    }
    if (r.staging === staging && !sameFlags(r.stagingFlags, cap.mountFlags)) {
      if (r.accessType === 'block' || mountAt(mounts, staging)) {
        throw alreadyExists(`volume ${id} is staged at ${staging} with other mount flags (${r.stagingFlags.join(',') || 'none'})`);
      }
    }
    // Checked before attaching or formatting anything, so a refused stage leaves no device behind.
    const occupied = r.accessType === 'mount' ? mountAt(mounts, staging) : undefined;
    if (occupied) {
      if (!(await isVolumeMount(occupied, r, backend))) throw failedPrecondition(`another filesystem is mounted at ${staging}`);
      if (readOnlyMount(occupied) !== endsReadOnly(isReadOnlyMode(cap.mode), cap.mountFlags)) {
        throw alreadyExists(`volume ${id} is staged at ${staging} ${readOnlyMount(occupied) ? 'read-only' : 'read-write'}; unstage it to stage it otherwise`);
      }
    } else {
      await kit.refuseNesting(staging, mounts);
    }
    // Missing or damaged storage is the node's state, not a fault of the call.
    const broken = await backend.problem(r);
    if (broken !== undefined) throw failedPrecondition(`volume ${id} cannot be staged: ${broken}`);
    const hadDevice = (await attachedDevice(r, backend)) !== undefined;
    const dir = kit.open(staging, 'staging_target_path', true);
    let madeDir = false;
    const mounted = occupied !== undefined;
    try {
      // A staging mount already there is this volume's (checked above): its root is no directory to make.
      if (!mounted) madeDir = dir.makeDirectory();
      // Whether the record must reach the disk before we answer.
      let durable = false;
      if (r.accessType === 'mount') {
        durable = await mountVolume(dir, r, backend, { fsType, readOnly: isReadOnlyMode(cap.mode), flags: cap.mountFlags, alreadyMounted: mounted });
      } else {
        await stageDevice(r, backend);
      }
      r.staging = staging;
      r.stagingFlags = cap.mountFlags;
      await kit.catalog.save(r, durable);
      return {};
    } catch (err) {
      // A refused stage leaves what it found: no device it attached, no directory it made.
      // A failure after the mount (a grow) leaves the mount: it is the volume's, and a retry finishes.
      // Whether a mount is up is asked of the held entry, not its path: a directory above it
      // renamed by someone racing the path must not pass a live mount off as none (and its device as free).
      if (!mounted && dir.mountedHere() === undefined) {
        if (!hadDevice) await undoAttach(r, backend).catch((e: unknown) => log('warn', 'detach after failed stage failed', { id, error: (e as Error).message }));
        if (madeDir) dir.removeIfMade();
      }
      throw err;
    } finally {
      dir.close();
    }
  });
}

export async function unstage(kit: NodeKit, req: csi.NodeUnstageVolumeRequest__Output): Promise<csi.NodeUnstageVolumeResponse> {
  const id = requireVolumeId(req.volume_id);
  const staging = kit.resolve(req.staging_target_path, 'staging_target_path');
  return kit.withLocks(id, [staging], async () => {
    const r = kit.catalog.get(id);
    const mounts = await readMountTable();
    const m = mountAt(mounts, staging);
    if (!r || r.state !== 'ready') {
      if (m) throw notFound(`volume ${id} does not exist; the mount at ${staging} is left alone`);
      return {};
    }
    if (r.staging !== null && r.staging !== staging) return {}; // staged elsewhere: nothing at this path is ours
    const live: Publication[] = [];
    for (const p of r.publications) if (mountAt(mounts, p.targetPath)) live.push(p);
    if (live.length > 0) throw failedPrecondition(`volume ${id} is still published at ${live.map((p) => p.targetPath).join(', ')}`);
    const backend = kit.catalog.pool(r.pool);
    if (m && !(await isVolumeMount(m, r, backend))) throw failedPrecondition(`the mount at ${staging} is not volume ${id}'s`);
    // Checked before anything is undone, so a refused unstage leaves the volume as it was.
    await refuseStray(mounts, r, backend, staging);
    if (m) {
      const dir = kit.open(staging, 'staging_target_path', false);
      try {
        // The held path must still lead to the mount the table showed (see unpublish).
        if (dir.mountedHere() !== m.id) throw new PathChanged(`staging_target_path "${staging}" changed while it was being unstaged`);
        await unmountRef(dir.ref);
      } finally {
        dir.close();
      }
      failpoint('unstage:unmounted');
    }
    await releaseFromNode(r, backend);
    failpoint('unstage:detached');
    r.staging = null;
    r.stagingFlags = [];
    r.publications = [];
    await kit.catalog.save(r, false);
    return {};
  });
}

/**
 * Refuses to stage or unstage a volume still mounted off its paths: a mount someone carried
 * away by renaming a directory above it. Unstaging would detach the device under it, and a
 * stage elsewhere would forget it; the call succeeds once it is moved back or unmounted.
 */
async function refuseStray(mounts: readonly MountEntry[], r: VolumeRecord, backend: Backend, staging: string): Promise<void> {
  const expected = [staging, ...(r.staging === null ? [] : [r.staging]), ...r.publications.map((p) => p.targetPath)];
  const stray = await strayVolumeMounts(mounts, r, backend, expected);
  if (stray.length > 0) {
    throw failedPrecondition(`volume ${r.id} is still mounted at ${stray.map((e) => e.mountPoint).join(', ')}, none of its staging or target paths (a directory above was moved while it was mounted); move it back or unmount it`);
  }
}
