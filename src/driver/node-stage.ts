// NodeStageVolume and NodeUnstageVolume: attach, format once, mount at the staging path; and undo it.
import { promises as fs } from 'node:fs';
import type * as csi from '../csi/types.js';
import type { Publication } from '../pool/volume-record.js';
import { deviceNumber } from '../sys/device-id.js';
import { growFilesystem, growUnmountedExt4, makeFilesystem } from '../sys/filesystem.js';
import { mountAt, mountDevice, readMountTable } from '../sys/mounts.js';
import { failpoint } from '../util/failpoint.js';
import { isReadOnlyMode, requireCapability } from './capability.js';
import { alreadyExists, failedPrecondition, invalidArgument, notFound } from './errors.js';
import { sameFlags, unmount, type NodeKit } from './node-kit.js';
import { requireVolumeId } from './validate.js';

export async function stage(kit: NodeKit, req: csi.NodeStageVolumeRequest__Output): Promise<csi.NodeStageVolumeResponse> {
  const id = requireVolumeId(req.volume_id);
  const staging = await kit.checkPath(req.staging_target_path, 'staging_target_path');
  const cap = requireCapability(req.volume_capability, 'volume_capability');
  return kit.ctx.locks.with([id], async () => {
    const r = kit.volume(id);
    // One look at the mount table per call: the checks below all read the same snapshot.
    const mounts = await readMountTable();
    if (r.ephemeral) throw failedPrecondition(`volume ${id} is an inline ephemeral volume; it is never staged`);
    if (cap.accessType !== r.accessType) throw invalidArgument(`volume ${id} was created for ${r.accessType} access, not ${cap.accessType}`);
    const pool = kit.catalog.pool(r.pool);
    if (r.staging !== null && r.staging !== staging) {
      const stillThere = r.accessType === 'mount' ? mountAt(mounts, r.staging) : await pool.device(r);
      if (stillThere) throw failedPrecondition(`volume ${id} is already staged at ${r.staging}`);
    }
    const fsType = r.accessType === 'block' ? '' : (cap.fsType || r.fsType || 'ext4');
    if (r.formatted && fsType !== r.fsType) throw failedPrecondition(`volume ${id} holds ${r.fsType}; it cannot be staged as ${fsType}`);
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
    } else {
      await kit.refuseNesting(staging, mounts);
    }
    // A missing or truncated image is the node's state, not a fault of the call.
    const broken = await pool.problem(r);
    if (broken !== undefined) throw failedPrecondition(`volume ${id} cannot be staged: ${broken}`);
    const device = await pool.attach(r);
    failpoint('stage:attached');
    await fs.mkdir(staging, { recursive: true });
    // Whether the record must reach the disk before we answer: "formatted" must, or a
    // power loss could make a later stage format over the user's data.
    let durable = false;
    if (r.accessType === 'mount' && fsType !== '') {
      // Anything mounted here is this volume (the check above refused anything else): a retry.
      const mountedHere = occupied !== undefined;
      if (!r.formatted) {
        // Format once: the record, not a probe of the device, says whether this volume
        // was ever formatted. A crash before the record is saved only repeats the mkfs of
        // a volume nobody could have written to yet (stage never returned) - unless the
        // crash came after the mount, in which case the filesystem is there already.
        if (!mountedHere) await makeFilesystem(device, fsType);
        failpoint('stage:formatted');
        r.formatted = true;
        r.fsType = fsType;
        r.filesystemBytes = r.capacityBytes;
        durable = true;
      }
      const needsGrow = (r.filesystemBytes ?? r.capacityBytes) < r.capacityBytes;
      if (!mountedHere) {
        // A volume expanded while not staged grows here, before anyone uses it.
        if (needsGrow && fsType === 'ext4') await growUnmountedExt4(device);
        const opts = [isReadOnlyMode(cap.mode) ? 'ro' : 'rw', ...cap.mountFlags];
        await mountDevice(device, staging, fsType, opts);
        failpoint('stage:mounted');
      }
      if (needsGrow) {
        if (fsType === 'xfs') await growFilesystem(device, staging, 'xfs');
        r.filesystemBytes = r.capacityBytes;
      }
    }
    r.staging = staging;
    r.stagingFlags = cap.mountFlags;
    await kit.catalog.save(r, durable);
    return {};
  });
}

export async function unstage(kit: NodeKit, req: csi.NodeUnstageVolumeRequest__Output): Promise<csi.NodeUnstageVolumeResponse> {
  const id = requireVolumeId(req.volume_id);
  const staging = await kit.checkPath(req.staging_target_path, 'staging_target_path');
  return kit.ctx.locks.with([id], async () => {
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
    const pool = kit.catalog.pool(r.pool);
    if (m) {
      if (!(await kit.belongsTo(m, r, pool))) throw failedPrecondition(`the mount at ${staging} is not volume ${id}'s`);
      await unmount(staging);
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
