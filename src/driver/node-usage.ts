// NodeGetVolumeStats and NodeExpandVolume: what a mounted volume holds, its condition, and growing it in place.
import { promises as fs } from 'node:fs';
import type * as csi from '../csi/types.js';
import { filesystemErrorCount, growFilesystem, OnlineGrowRefused } from '../sys/filesystem.js';
import { findMount } from '../sys/mounts.js';
import { requireCapability } from './capability.js';
import { failedPrecondition, invalidArgument, notFound } from './errors.js';
import { growBacking } from './expansion.js';
import type { NodeKit } from './node-kit.js';
import { readRange } from './sizing.js';
import { requireVolumeId } from './validate.js';

export async function getVolumeStats(kit: NodeKit, req: csi.NodeGetVolumeStatsRequest__Output): Promise<csi.NodeGetVolumeStatsResponse> {
  const id = requireVolumeId(req.volume_id);
  if (req.volume_path === '') throw invalidArgument('volume_path is required');
  const r = kit.volume(id);
  const volumePath = kit.requirePathOf(r, req.volume_path, 'volume_path');
  const pool = kit.blockPool(r.pool);
  let problem = await pool.problem(r);
  const m = await findMount(volumePath);
  if (!problem && !m && (r.accessType === 'mount' || volumePath !== r.staging)) problem = `${volumePath} is not mounted`;
  if (r.accessType === 'block') {
    return {
      usage: [{ unit: 'BYTES', total: String(r.capacityBytes) }],
      volume_condition: { abnormal: problem !== undefined, message: problem ?? 'healthy' },
    };
  }
  let s;
  try {
    s = await fs.statfs(volumePath);
  } catch (err) {
    throw notFound(`volume path ${volumePath}: ${(err as Error).message}`);
  }
  if (!problem && m && m.source.startsWith('/dev/')) {
    const errors = await filesystemErrorCount(m.source);
    if (errors > 0) problem = `the filesystem reported ${errors} error(s); check the kernel log and run fsck`;
  }
  return {
    usage: [
      { unit: 'BYTES', total: String(s.blocks * s.bsize), available: String(s.bavail * s.bsize), used: String((s.blocks - s.bfree) * s.bsize) },
      { unit: 'INODES', total: String(s.files), available: String(s.ffree), used: String(s.files - s.ffree) },
    ],
    volume_condition: { abnormal: problem !== undefined, message: problem ?? 'healthy' },
  };
}

export async function expand(kit: NodeKit, req: csi.NodeExpandVolumeRequest__Output): Promise<csi.NodeExpandVolumeResponse> {
  const id = requireVolumeId(req.volume_id);
  if (req.volume_path === '') throw invalidArgument('volume_path is required');
  const range = readRange(req.capacity_range);
  if (req.volume_capability) requireCapability(req.volume_capability, 'volume_capability');
  return kit.ctx.locks.with([id], async () => {
    const r = kit.volume(id);
    const volumePath = kit.requirePathOf(r, req.volume_path, 'volume_path');
    // Kubernetes' resizer never calls ControllerExpandVolume on this node (see
    // controllerCapabilities), so the node grows the image itself.
    if (range.required > r.capacityBytes) await growBacking(kit.ctx, r, range);
    const pool = kit.blockPool(r.pool);
    await pool.refreshDevice(r);
    if (r.accessType === 'mount') {
      const m = await findMount(volumePath);
      if (!m) throw failedPrecondition(`volume ${id} is not mounted at ${volumePath}`);
      try {
        await growFilesystem(m.source, volumePath, r.fsType || 'ext4');
      } catch (err) {
        if (err instanceof OnlineGrowRefused) {
          throw failedPrecondition(`${err.message}; it will grow offline the next time the volume is staged`);
        }
        throw err;
      }
      if (r.filesystemBytes !== r.capacityBytes) {
        r.filesystemBytes = r.capacityBytes;
        await kit.catalog.save(r, false);
      }
    }
    return { capacity_bytes: String(r.capacityBytes) };
  });
}
