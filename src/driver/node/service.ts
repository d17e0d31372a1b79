// The CSI Node service: its capabilities and info, and each call mapped to its handler in stage, publish and usage.
import type * as csi from '../../csi/types.js';
import type { DriverContext } from '../context/context.js';
import { NodeKit } from './kit.js';
import { publish, unpublish } from './publish.js';
import { stage, unstage } from './stage.js';
import { expand, getVolumeStats } from './usage.js';

export const NODE_CAPABILITIES = [
  'STAGE_UNSTAGE_VOLUME',
  'GET_VOLUME_STATS',
  'EXPAND_VOLUME',
  'VOLUME_CONDITION',
  'SINGLE_NODE_MULTI_WRITER',
] as const;

export function nodeService(ctx: DriverContext) {
  const kit = new NodeKit(ctx);
  return {
    NodeStageVolume: (req: csi.NodeStageVolumeRequest__Output) => stage(kit, req),
    NodeUnstageVolume: (req: csi.NodeUnstageVolumeRequest__Output) => unstage(kit, req),
    NodePublishVolume: (req: csi.NodePublishVolumeRequest__Output) => publish(kit, req),
    NodeUnpublishVolume: (req: csi.NodeUnpublishVolumeRequest__Output) => unpublish(kit, req),
    NodeGetVolumeStats: (req: csi.NodeGetVolumeStatsRequest__Output) => getVolumeStats(kit, req),
    NodeExpandVolume: (req: csi.NodeExpandVolumeRequest__Output) => expand(kit, req),
    NodeGetCapabilities: async (): Promise<csi.NodeGetCapabilitiesResponse> => ({
      capabilities: NODE_CAPABILITIES.map((type) => ({ rpc: { type } })),
    }),
    NodeGetInfo: async (): Promise<csi.NodeGetInfoResponse> => ({
      node_id: ctx.config.nodeId,
      max_volumes_per_node: '0',
      accessible_topology: ctx.topology(),
    }),
  };
}
