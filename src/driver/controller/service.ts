// The CSI Controller service: its capabilities, and each call mapped to its handler in volumes, snapshots and expansion.
import type * as csi from '../../csi/types.js';
import type { _csi_v1_ControllerServiceCapability_RPC_Type__Output } from '../../gen/csi/v1/ControllerServiceCapability.js';
import type { DriverContext } from '../context/context.js';
import { controllerExpandVolume } from './expansion.js';
import { canSnapshot, createSnapshot, deleteSnapshot, listSnapshots } from './snapshots.js';
import { createVolume, deleteVolume, getCapacity, listVolumes, validateVolumeCapabilities } from './volumes.js';

type ControllerCapability = _csi_v1_ControllerServiceCapability_RPC_Type__Output;
const BASE_CONTROLLER_CAPABILITIES: ControllerCapability[] = ['CREATE_DELETE_VOLUME', 'LIST_VOLUMES', 'GET_CAPACITY', 'SINGLE_NODE_MULTI_WRITER'];

/**
 * EXPAND_VOLUME is advertised only when asked for. In a cluster the external-resizer runs
 * once, not per node, and would send ControllerExpandVolume to a node that does not hold the
 * volume; without the capability it marks the PV resized and kubelet calls
 * NodeExpandVolume on the volume's own node, which grows the image there.
 */
export function controllerCapabilities(controllerExpansion: boolean, snapshots = false): ControllerCapability[] {
  return [
    ...BASE_CONTROLLER_CAPABILITIES,
    ...(snapshots ? ['CREATE_DELETE_SNAPSHOT', 'LIST_SNAPSHOTS', 'CLONE_VOLUME'] as const : []),
    ...(controllerExpansion ? ['EXPAND_VOLUME'] as const : []),
  ];
}

export async function controllerGetCapabilities(ctx: DriverContext): Promise<csi.ControllerGetCapabilitiesResponse> {
  return { capabilities: controllerCapabilities(ctx.config.controllerExpansion, canSnapshot(ctx)).map((type) => ({ rpc: { type } })) };
}

export function controllerService(ctx: DriverContext) {
  return {
    CreateVolume: (req: csi.CreateVolumeRequest__Output) => createVolume(ctx, req),
    DeleteVolume: (req: csi.DeleteVolumeRequest__Output) => deleteVolume(ctx, req),
    ValidateVolumeCapabilities: (req: csi.ValidateVolumeCapabilitiesRequest__Output) => validateVolumeCapabilities(ctx, req),
    ListVolumes: (req: csi.ListVolumesRequest__Output) => listVolumes(ctx, req),
    GetCapacity: (req: csi.GetCapacityRequest__Output) => getCapacity(ctx, req),
    ControllerGetCapabilities: () => controllerGetCapabilities(ctx),
    ControllerExpandVolume: (req: csi.ControllerExpandVolumeRequest__Output) => controllerExpandVolume(ctx, req),
    CreateSnapshot: (req: csi.CreateSnapshotRequest__Output) => createSnapshot(ctx, req),
    DeleteSnapshot: (req: csi.DeleteSnapshotRequest__Output) => deleteSnapshot(ctx, req),
    ListSnapshots: (req: csi.ListSnapshotsRequest__Output) => listSnapshots(ctx, req),
  };
}
