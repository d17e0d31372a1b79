// CSI inline ephemeral volumes: created, formatted and mounted by NodePublishVolume itself.
import type * as csi from '../../csi/types.js';
import { newVolumeRecord, type VolumeRecord } from '../../pool/volume-record.js';
import { mountAt, readMountTable, unmountIfMounted } from '../../sys/mounts.js';
import { failpoint } from '../../util/failpoint.js';
import type { Capability } from '../request/capability.js';
import { alreadyExists, failedPrecondition, invalidArgument, resourceExhausted } from '../rpc/errors.js';
import { requireInlineAllowed } from '../request/inline-policy.js';
import { mountVolume } from '../mount/materialise.js';
import { endsReadOnly, readOnlyMount } from '../mount/mount-options.js';
import type { NodeKit } from './kit.js';
import { DEFAULT_FS_TYPE, minimumVolumeBytes, volumeFsType } from '../request/pool-fit.js';
import { lodeAttributes, poolMissing, readInlineAttributes } from '../request/parameters.js';
import { chooseSize } from '../request/sizing.js';

export async function publishInline(
  kit: NodeKit, req: csi.NodePublishVolumeRequest__Output, id: string, target: string, cap: Capability, readOnly: boolean,
): Promise<csi.NodePublishVolumeResponse> {
  if (cap.accessType !== 'mount') throw invalidArgument('inline ephemeral volumes are filesystems; block access is not supported');
  const attrs = readInlineAttributes(req.volume_context, kit.catalog);
  const missing = poolMissing(attrs, kit.catalog);
  if (missing !== undefined) throw resourceExhausted(`${missing}; the inline volume cannot be made on node ${kit.ctx.config.nodeId}`);
  return kit.withLocks(id, [target], async () => {
    let existing = kit.catalog.get(id);
    if (existing && !existing.ephemeral) throw alreadyExists(`volume ${id} is a persistent volume, not an inline ephemeral one`);
    if (existing && existing.state !== 'ready') {
      // A create whose undo failed part-way: finish removing it, then make the volume anew.
      for (const p of existing.publications) await unmountIfMounted(p.targetPath);
      await kit.catalog.destroy(existing);
      existing = undefined;
    }
    const mounts = await readMountTable();
    if (existing) {
      const pub = existing.publications[0];
      if (pub && pub.targetPath !== target) throw failedPrecondition(`inline volume ${id} is published at ${pub.targetPath}`);
      const m = mountAt(mounts, target);
      if (m) {
        if (readOnlyMount(m) !== endsReadOnly(readOnly, cap.mountFlags)) throw alreadyExists(`inline volume ${id} is published ${readOnlyMount(m) ? 'read-only' : 'read-write'}`);
        return {};
      }
      // Mount lost (a reboot): mount the existing filesystem again.
      await mountInline(kit, target, existing, existing.fsType || DEFAULT_FS_TYPE, readOnly, cap.mountFlags);
      return {};
    }
    if (mountAt(mounts, target)) throw failedPrecondition(`something else is mounted at ${target}`);
    await kit.refuseNesting(target, mounts);
    const backend = kit.catalog.pool(attrs.pool);
    const pool = backend.config;
    const fsType = volumeFsType(backend, 'mount', cap.fsType || attrs.fsType);
    const size = chooseSize({ required: attrs.sizeBytes ?? 0, limit: 0 }, pool, minimumVolumeBytes(backend, fsType), fsType, backend.allocationUnit());
    requireInlineAllowed(pool, size, kit.ctx.config.nodeId);
    // Only Lode's own attributes are kept: the rest of volume_context (pod details, and any
    // service account tokens kubelet adds) must not reach a record on disk.
    const record = newVolumeRecord({
      id, name: id, pool: pool.name, capacityBytes: size, accessType: 'mount', fsType, parameters: lodeAttributes(req.volume_context),
      ephemeral: true, stagingFlags: cap.mountFlags, publications: [{ targetPath: target, readOnly }], formatted: !backend.capabilities.needsFormat,
    });
    // A pool whose max-volume-size is smaller: answered RESOURCE_EXHAUSTED like a full one.
    await kit.catalog.provision(record, { finish: async (rec) => {
      await mountInline(kit, target, rec, fsType, readOnly, cap.mountFlags);
      failpoint('inline:mounted');
    } });
    return {};
  });
}

/** Makes the target directory (only it is ever removed again) and makes the volume appear there (formatting it the first time). */
async function mountInline(kit: NodeKit, target: string, r: VolumeRecord, fsType: string, readOnly: boolean, flags: string[]): Promise<void> {
  const entry = kit.open(target, 'target_path', true);
  let made = false;
  try {
    made = entry.makeDirectory();
    await mountVolume(entry, r, kit.catalog.pool(r.pool), { fsType, readOnly, flags });
  } catch (err) {
    // Whether a mount is up is asked of the held entry, not its path, which a racer may have moved.
    if (made && entry.mountedHere() === undefined) entry.removeIfMade();
    throw err;
  } finally {
    entry.close();
  }
}
