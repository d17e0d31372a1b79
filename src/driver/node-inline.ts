// CSI inline ephemeral volumes: created, formatted and mounted by NodePublishVolume itself.
import type * as csi from '../csi/types.js';
import { formatSize } from '../pool/sizes.js';
import { newVolumeRecord } from '../pool/volume-record.js';
import { makeFilesystem } from '../sys/filesystem.js';
import { findMount, mountAt, readMountTable, unmountIfMounted } from '../sys/mounts.js';
import { failpoint } from '../util/failpoint.js';
import type { Capability } from './capability.js';
import { alreadyExists, failedPrecondition, invalidArgument, resourceExhausted } from './errors.js';
import { requireInlineAllowed } from './inline-policy.js';
import { blockOf, endsReadOnly, mountFilesystem, readOnlyMount, type NodeKit } from './node-kit.js';
import { lodeAttributes, poolMissing, readInlineAttributes } from './parameters.js';
import { chooseSize } from './sizing.js';

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
      const device = await kit.blockPool(existing.pool).attach(existing);
      await mountInline(kit, target, device, existing.fsType || 'ext4', readOnly, cap.mountFlags);
      return {};
    }
    if (mountAt(mounts, target)) throw failedPrecondition(`something else is mounted at ${target}`);
    await kit.refuseNesting(target, mounts);
    const pool = kit.catalog.pool(attrs.pool).config;
    const fsType = cap.fsType || attrs.fsType || 'ext4';
    const size = chooseSize({ required: attrs.sizeBytes ?? 0, limit: 0 }, pool, fsType);
    requireInlineAllowed(pool, size, kit.ctx.config.nodeId);
    if (pool.maxVolumeBytes !== undefined && size > pool.maxVolumeBytes) {
      throw resourceExhausted(`pool ${pool.name} makes volumes up to ${formatSize(pool.maxVolumeBytes)}; ${formatSize(size)} asked`);
    }
    // Only Lode's own attributes are kept: the rest of volume_context (pod details, and any
    // service account tokens kubelet adds) must not reach a record on disk.
    const record = newVolumeRecord({
      id, name: id, pool: pool.name, capacityBytes: size, accessType: 'mount', fsType, parameters: lodeAttributes(req.volume_context),
      ephemeral: true, stagingFlags: cap.mountFlags, publications: [{ targetPath: target, readOnly }],
    });
    await kit.catalog.provision(record, async (rec, b) => {
      const p = blockOf(b);
      const device = await p.attach(rec);
      await makeFilesystem(device, fsType);
      rec.formatted = true;
      rec.filesystemBytes = rec.capacityBytes;
      await mountInline(kit, target, device, fsType, readOnly, cap.mountFlags);
      failpoint('inline:mounted');
    });
    return {};
  });
}

/** Makes the target directory (only it is ever removed again) and mounts the volume's filesystem there. */
async function mountInline(kit: NodeKit, target: string, device: string, fsType: string, readOnly: boolean, flags: string[]): Promise<void> {
  const entry = kit.open(target, 'target_path', true);
  let made = false;
  try {
    made = entry.makeDirectory();
    await mountFilesystem(entry, device, fsType, readOnly, flags);
  } catch (err) {
    if (made && !(await findMount(target))) entry.removeIfEmpty();
    throw err;
  } finally {
    entry.close();
  }
}
