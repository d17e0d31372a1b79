// NodeStageVolume and NodeUnstageVolume: attach, format once, mount at the staging path; and undo it.
import type * as csi from '../csi/types.js';
import { formatSize } from '../pool/sizes.js';
import type { Publication } from '../pool/volume-record.js';
import { deviceNumber } from '../sys/device-id.js';
import { growFilesystem, growUnmountedExt4, makeFilesystem } from '../sys/filesystem.js';
import { mountAt, readMountTable, unmountRef } from '../sys/mounts.js';
import { outsideCall } from '../util/call-signal.js';
import { failpoint } from '../util/failpoint.js';
import { log } from '../util/log.js';
import { isReadOnlyMode, requireCapability } from './capability.js';
import { alreadyExists, failedPrecondition, invalidArgument, notFound } from './errors.js';
import { endsReadOnly, mountFilesystem, readOnlyMount, sameFlags, type NodeKit } from './node-kit.js';
import { minimumFor } from './sizing.js';
import { requireVolumeId } from './validate.js';

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
    const pool = kit.blockPool(r.pool);
    if (r.staging !== null && r.staging !== staging) {
      const stillThere = r.accessType === 'mount' ? mountAt(mounts, r.staging) : await pool.device(r);
      if (stillThere) throw failedPrecondition(`volume ${id} is already staged at ${r.staging}`);
    }
    const fsType = r.accessType === 'block' ? '' : (cap.fsType || r.fsType || 'ext4');
    if (r.formatted && fsType !== r.fsType) throw failedPrecondition(`volume ${id} holds ${r.fsType}; it cannot be staged as ${fsType}`);
    if (!r.formatted && fsType !== '' && r.capacityBytes < minimumFor(fsType)) {
      throw invalidArgument(`volume ${id} has ${formatSize(r.capacityBytes)}; ${fsType} needs at least ${formatSize(minimumFor(fsType))} (volume_capability.mount.fs_type)`);
    }
    if (r.staging === staging && !sameFlags(r.stagingFlags, cap.mountFlags)) {
      if (r.accessType === 'block' || mountAt(mounts, staging)) {
        throw alreadyExists(`volume ${id} is staged at ${staging} with other mount flags (${r.stagingFlags.join(',') || 'none'})`);
      }
    }
    // Checked before attaching or formatting anything, so a refused stage leaves no loop device behind.
    const occupied = r.accessType === 'mount' ? mountAt(mounts, staging) : undefined;
    if (occupied) {
      const own = await pool.device(r);
      if (own === undefined || occupied.devId !== (await deviceNumber(own))) throw failedPrecondition(`another filesystem is mounted at ${staging}`);
      if (readOnlyMount(occupied) !== endsReadOnly(isReadOnlyMode(cap.mode), cap.mountFlags)) {
        throw alreadyExists(`volume ${id} is staged at ${staging} ${readOnlyMount(occupied) ? 'read-only' : 'read-write'}; unstage it to stage it otherwise`);
      }
    } else {
      await kit.refuseNesting(staging, mounts);
    }
    // A missing or truncated image is the node's state, not a fault of the call.
    const broken = await pool.problem(r);
    if (broken !== undefined) throw failedPrecondition(`volume ${id} cannot be staged: ${broken}`);
    const hadDevice = (await pool.device(r)) !== undefined;
    const dir = kit.open(staging, 'staging_target_path', true);
    let madeDir = false;
    let mounted = occupied !== undefined;
    try {
      // A staging mount already there is this volume's (checked above): its root is no directory to make.
      if (!mounted) madeDir = dir.makeDirectory();
      const device = await pool.attach(r);
      failpoint('stage:attached');
      // Whether the record must reach the disk before we answer: "formatted" must, or a
      // power loss could make a later stage format over the user's data.
      let durable = false;
      if (r.accessType === 'mount' && fsType !== '') {
        // Anything mounted here is this volume (the check above refused anything else): a retry.
        if (!r.formatted) {
          // Format once: the record, not a probe of the device, says whether this volume
          // was ever formatted. A crash before the record is saved only repeats the mkfs of
          // a volume nobody could have written to yet (stage never returned) - unless the
          // crash came after the mount, in which case the filesystem is there already.
          if (!mounted) await makeFilesystem(device, fsType);
          failpoint('stage:formatted');
          r.formatted = true;
          r.fsType = fsType;
          r.filesystemBytes = r.capacityBytes;
          durable = true;
        }
        const needsGrow = (r.filesystemBytes ?? r.capacityBytes) < r.capacityBytes;
        if (!mounted) {
          // A volume expanded while not staged grows here, before anyone uses it.
          if (needsGrow && fsType === 'ext4') await growUnmountedExt4(device);
          // A mount that failed, or came out writable and was taken down, leaves nothing mounted.
          await mountFilesystem(dir, device, fsType, isReadOnlyMode(cap.mode), cap.mountFlags);
          mounted = true;
          failpoint('stage:mounted');
        }
        if (needsGrow) {
          // A mount point cannot be renamed or replaced, so its real path is safe to name here.
          if (fsType === 'xfs') await growFilesystem(device, staging, 'xfs');
          r.filesystemBytes = r.capacityBytes;
        }
      }
      r.staging = staging;
      r.stagingFlags = cap.mountFlags;
      await kit.catalog.save(r, durable);
      return {};
    } catch (err) {
      // A refused stage leaves what it found: no device it attached, no directory it made.
      if (!mounted) {
        // Also after the call's deadline killed it: the undo runs outside the dead call.
        if (!hadDevice) await outsideCall(() => pool.detach(r)).catch((e: unknown) => log('warn', 'detach after failed stage failed', { id, error: (e as Error).message }));
        if (madeDir) dir.removeIfEmpty();
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
    const pool = kit.blockPool(r.pool);
    if (m) {
      if (!(await kit.belongsTo(m, r, pool))) throw failedPrecondition(`the mount at ${staging} is not volume ${id}'s`);
      const dir = kit.open(staging, 'staging_target_path', false);
      try {
        await unmountRef(dir.ref);
      } finally {
        dir.close();
      }
      failpoint('unstage:unmounted');
    }
    await pool.detach(r);
    failpoint('unstage:detached');
    r.staging = null;
    r.stagingFlags = [];
    r.publications = [];
    await kit.catalog.save(r, false);
    return {};
  });
}
