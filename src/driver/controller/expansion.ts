// ControllerExpandVolume: grows a volume's backing storage; a block volume's filesystem then grows on the node.
import type * as csi from '../../csi/types.js';
import type { DriverContext } from '../context/context.js';
import { growBacking } from '../mount/grow-backing.js';
import { refreshAfterGrow } from '../mount/materialise.js';
import { requireCapability } from '../request/capability.js';
import { readRange } from '../request/sizing.js';
import { requireVolumeId } from '../request/validate.js';
import { invalidArgument, notFound } from '../rpc/errors.js';

export async function controllerExpandVolume(ctx: DriverContext, req: csi.ControllerExpandVolumeRequest__Output): Promise<csi.ControllerExpandVolumeResponse> {
  const { catalog } = ctx;
  const id = requireVolumeId(req.volume_id);
  if (!req.capacity_range) throw invalidArgument('capacity_range is required');
  const range = readRange(req.capacity_range);
  if (req.volume_capability) requireCapability(req.volume_capability, 'volume_capability');
  return ctx.locks.with([id], async () => {
    const r = catalog.get(id);
    if (!r || r.state !== 'ready') throw notFound(`volume ${id} does not exist`);
    const backend = catalog.pool(r.pool);
    await growBacking(catalog, r, range);
    await refreshAfterGrow(r, backend);
    // A directory volume's new limit holds at once; a block volume's filesystem grows on the node.
    return { capacity_bytes: String(r.capacityBytes), node_expansion_required: backend.kind === 'block' };
  });
}
