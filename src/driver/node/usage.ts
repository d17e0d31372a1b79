// NodeGetVolumeStats and NodeExpandVolume: what a mounted volume holds, its condition, and growing it in place.
import type * as csi from '../../csi/types.js';
import { findMount } from '../../sys/mounts.js';
import { requireCapability } from '../request/capability.js';
import { invalidArgument, notFound } from '../rpc/errors.js';
import { growBacking } from '../mount/grow-backing.js';
import { growMounted, mountedUsage } from '../mount/materialise.js';
import type { NodeKit } from './kit.js';
import { readRange } from '../request/sizing.js';
import { requireVolumeId } from '../request/validate.js';

export async function getVolumeStats(kit: NodeKit, req: csi.NodeGetVolumeStatsRequest__Output): Promise<csi.NodeGetVolumeStatsResponse> {
  const id = requireVolumeId(req.volume_id);
  if (req.volume_path === '') throw invalidArgument('volume_path is required');
  const r = kit.volume(id);
  const volumePath = kit.requirePathOf(r, req.volume_path, 'volume_path');
  const backend = kit.catalog.pool(r.pool);
  let problem = await backend.problem(r);
  const m = await findMount(volumePath);
  if (!problem && !m && (r.accessType === 'mount' || volumePath !== r.staging)) problem = `${volumePath} is not mounted`;
  if (r.accessType === 'block') {
    problem ??= await backend.warning(r);
    return {
      usage: [{ unit: 'BYTES', total: String(r.capacityBytes) }],
      volume_condition: { abnormal: problem !== undefined, message: problem ?? 'healthy' },
    };
  }
  let u;
  try {
    u = await mountedUsage(r, backend, volumePath, m);
  } catch (err) {
    // Damaged storage (a directory volume's directory gone) is the answer: the volume is abnormal.
    if (problem !== undefined) {
      return { usage: [{ unit: 'BYTES', total: String(r.capacityBytes) }], volume_condition: { abnormal: true, message: problem } };
    }
    throw notFound(`volume path ${volumePath}: ${(err as Error).message}`);
  }
  problem ??= u.problem ?? (await backend.warning(r));
  const usage: csi.VolumeUsage[] = [{ unit: 'BYTES', total: String(u.bytes.total), available: String(u.bytes.available), used: String(u.bytes.used) }];
  if (u.inodes) usage.push({ unit: 'INODES', total: String(u.inodes.total), available: String(u.inodes.available), used: String(u.inodes.used) });
  return { usage, volume_condition: { abnormal: problem !== undefined, message: problem ?? 'healthy' } };
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
    if (range.required > r.capacityBytes) await growBacking(kit.catalog, r, range);
    if (await growMounted(r, kit.catalog.pool(r.pool), volumePath)) await kit.catalog.save(r, false);
    return { capacity_bytes: String(r.capacityBytes) };
  });
}
