// NodePublishVolume and NodeUnpublishVolume: bind a staged volume into a pod, and take it out again.
import type * as csi from '../../csi/types.js';
import type { Backend } from '../../pool/backend.js';
import { volumePaths, type Publication, type VolumeRecord } from '../../pool/volume-record.js';
import { PathChanged } from '../../sys/beneath.js';
import { bindMount, mountAt, readMountTable, unmountRef, type MountEntry } from '../../sys/mounts.js';
import { outsideCall } from '../../util/call-signal.js';
import { failpoint } from '../../util/failpoint.js';
import { log } from '../../util/log.js';
import { isReadOnlyMode, requireCapability } from '../request/capability.js';
import { alreadyExists, failedPrecondition, invalidArgument, notFound } from '../rpc/errors.js';
import { publishInline } from './inline.js';
import { isVolumeMount, publicationDevice, releasePublicationDevice, strayVolumeMounts } from '../mount/materialise.js';
import { bindDirectory, endsReadOnly, readOnlyMount } from '../mount/mount-options.js';
import type { NodeKit } from './kit.js';
import { EPHEMERAL_KEY } from '../request/parameters.js';
import { isInside, requireVolumeId } from '../request/validate.js';

export async function publish(kit: NodeKit, req: csi.NodePublishVolumeRequest__Output): Promise<csi.NodePublishVolumeResponse> {
  const id = requireVolumeId(req.volume_id);
  const cap = requireCapability(req.volume_capability, 'volume_capability');
  const target = kit.resolve(req.target_path, 'target_path');
  const readOnly = req.readonly || isReadOnlyMode(cap.mode);
  if (req.volume_context[EPHEMERAL_KEY] === 'true') return publishInline(kit, req, id, target, cap, readOnly);
  if (req.staging_target_path === '') throw invalidArgument('staging_target_path is required: this driver stages volumes (STAGE_UNSTAGE_VOLUME)');
  const staging = kit.resolve(req.staging_target_path, 'staging_target_path');
  // A bind at, inside or over the staging path would stack on or hide the staging mount.
  if (target === staging || isInside(target, staging) || isInside(staging, target)) {
    throw invalidArgument(`target_path "${target}" must lie apart from staging_target_path "${staging}"`);
  }
  return kit.withLocks(id, [target], async () => {
    const r = kit.volume(id);
    if (r.ephemeral) throw failedPrecondition(`volume ${id} is an inline ephemeral volume published elsewhere`);
    if (cap.accessType !== r.accessType) throw invalidArgument(`volume ${id} was created for ${r.accessType} access, not ${cap.accessType}`);
    if (r.staging !== staging) throw failedPrecondition(`volume ${id} is not staged at ${staging}; call NodeStageVolume first`);
    const backend = kit.catalog.pool(r.pool);
    const mounts = await readMountTable();
    const stagingMount = r.accessType === 'mount' ? mountAt(mounts, staging) : undefined;
    if (r.accessType === 'mount' && !stagingMount) throw failedPrecondition(`volume ${id}'s staging mount at ${staging} is gone; stage it again`);
    const known = r.publications.find((p) => p.targetPath === target);
    const m = mountAt(mounts, target);
    if (m) {
      if (!known && !(await isVolumeMount(m, r, backend))) throw failedPrecondition(`something else is mounted at ${target}`);
      // A read-only raw block publication is a read-write bind of a read-only device, so the record says which it is.
      const publishedReadOnly = r.accessType === 'block' && known ? known.readOnly : readOnlyMount(m);
      const wanted = r.accessType === 'block' ? readOnly : endsReadOnly(readOnly, cap.mountFlags);
      if (publishedReadOnly !== wanted) throw alreadyExists(`volume ${id} is published at ${target} ${publishedReadOnly ? 'read-only' : 'read-write'}`);
      if (!known) {
        r.publications.push({ targetPath: target, readOnly });
        await kit.catalog.save(r, false);
      }
      return {};
    }
    // A new publication would replace the record of the one carried off (and a read-only one's device).
    if (known) await refuseCarriedOff(mounts, r, backend, target);
    await kit.refuseNesting(target, mounts);
    const pub: Publication = { targetPath: target, readOnly };
    const entry = kit.open(target, 'target_path', true);
    let made = false;
    try {
      if (r.accessType === 'mount') {
        made = entry.makeDirectory();
        const source = kit.open(staging, 'staging_target_path', false);
        try {
          // The staging mount seen in the table must be what the held path leads to: else a
          // directory above it was moved since, and the bind would take the empty directory.
          if (stagingMount && source.mountedHere() !== stagingMount.id) throw new PathChanged(`staging_target_path "${staging}" no longer leads to the staging mount`);
          await bindDirectory(entry, source.ref, readOnly, cap.mountFlags);
        } finally {
          source.close();
        }
        failpoint('publish:mounted');
      } else {
        const device = await publicationDevice(r, backend, readOnly);
        if (readOnly) pub.device = device;
        made = entry.makeFile();
        try {
          await entry.withEntry('file', (ref) => bindMount(device, ref, entry.ref));
        } catch (err) {
          if (readOnly) await outsideCall(() => releasePublicationDevice(backend, device));
          throw err;
        }
      }
    } catch (err) {
      // Only what this call made, if it is still there: never what someone put in its place.
      if (made) entry.removeIfMade();
      throw err;
    } finally {
      entry.close();
    }
    r.publications = [...r.publications.filter((p) => p.targetPath !== target), pub];
    await kit.catalog.save(r, false);
    return {};
  });
}

export async function unpublish(kit: NodeKit, req: csi.NodeUnpublishVolumeRequest__Output): Promise<csi.NodeUnpublishVolumeResponse> {
  const id = requireVolumeId(req.volume_id);
  const target = kit.resolve(req.target_path, 'target_path');
  return kit.withLocks(id, [target], async () => {
    const r = kit.catalog.get(id);
    // The snapshot stays good for refuseNesting after our own unmount: that only removes the
    // mount at the target itself, and refuseNesting looks below and above it.
    const mounts = await readMountTable();
    const m = mountAt(mounts, target);
    const entry = kit.open(target, 'target_path', false);
    try {
      if (!r) {
        if (m) throw notFound(`volume ${id} does not exist; the mount at ${target} is left alone`);
        await kit.refuseNesting(target, mounts); // an empty file or directory inside a volume is a pod's, not a target
        entry.removeIfEmpty();
        return {};
      }
      const backend = kit.catalog.pool(r.pool);
      const pub = r.publications.find((p) => p.targetPath === target);
      if (m) {
        // The staging mount is the volume's too, but only NodeUnstageVolume may take it down.
        if (!pub && target === r.staging) throw failedPrecondition(`${target} is where volume ${id} is staged, not published; use NodeUnstageVolume`);
        if (!pub && !(await isVolumeMount(m, r, backend))) throw failedPrecondition(`the mount at ${target} is not volume ${id}'s`);
        // The held path must still lead to the mount the table showed: a directory above it
        // renamed since would make the umount miss, or take down another mount.
        if (entry.mountedHere() !== m.id) throw new PathChanged(`target_path "${target}" changed while it was being unpublished`);
        await unmountRef(entry.ref);
        failpoint('unpublish:unmounted');
      }
      if (!m && pub) await refuseCarriedOff(mounts, r, backend, target);
      await kit.refuseNesting(target, mounts);
      // Publish refuses a directory with content, so what is in it now was written after the
      // unmount, by someone else: it stays, and the volume is unpublished all the same.
      if (entry.removeIfEmpty() === 'kept') log('warn', 'target kept after unpublish: something was written into it while unmounted', { id, target });
      if (pub?.device) await releasePublicationDevice(backend, pub.device);
      if (r.ephemeral) {
        // Only unpublishing its own target ends an inline volume: a call naming another path
        // must not delete the image under the pod that still has it mounted.
        if (pub) await kit.catalog.destroy(r);
        return {};
      }
      if (pub) {
        r.publications = r.publications.filter((p) => p !== pub);
        await kit.catalog.save(r, false);
      }
      return {};
    } finally {
      entry.close();
    }
  });
}

/**
 * Refuses a call on a publication recorded at `target` but mounted nowhere there while the
 * volume is mounted off its paths: a directory above the target was moved while it was
 * published. Forgetting the publication, or recording another in its place, would leave that
 * mount up for good (and a read-only raw block one's device attached); the call succeeds once
 * the directory is moved back or the mount taken down.
 */
async function refuseCarriedOff(mounts: readonly MountEntry[], r: VolumeRecord, backend: Backend, target: string): Promise<void> {
  const stray = await strayVolumeMounts(mounts, r, backend, volumePaths(r));
  if (stray.length > 0) {
    throw failedPrecondition(`volume ${r.id} is published at ${target}, but mounted at ${stray.map((e) => e.mountPoint).join(', ')} instead (a directory above was moved while it was published); move it back or unmount it`);
  }
}
