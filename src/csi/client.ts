// A promise-based CSI client over a unix socket, used by tests, benchmarks and the cluster bench.
import * as grpc from '@grpc/grpc-js';
import { csiPackage } from './proto.js';
import type * as csi from './types.js';

/**
 * Decides when a call starts and when its caller sees the answer: given the call, returns what
 * the caller awaits. The cluster bench's runtime uses one per driver to overlap calls of
 * different nodes while keeping its run deterministic; everyone else calls straight through.
 */
export type CallGate = <T>(start: () => Promise<T>) => Promise<T>;

/** Options of one call. */
export interface CallOptions {
  /** Milliseconds before the call fails with DEADLINE_EXCEEDED. */
  timeoutMs?: number;
}

type UnaryMethod<Req, Res> = (
  argument: Req,
  metadata: grpc.Metadata,
  options: grpc.CallOptions,
  callback: grpc.requestCallback<Res>,
) => grpc.ClientUnaryCall;

/** Turns "unix:///run/x.sock", "unix:/run/x.sock" or a bare path into a grpc-js target. */
export function toGrpcTarget(endpoint: string): string {
  if (endpoint.startsWith('unix://')) return `unix:${endpoint.slice('unix://'.length)}`;
  if (endpoint.startsWith('unix:')) return endpoint;
  return `unix:${endpoint}`;
}

/** One connection to a CSI endpoint with the three services. */
export class CsiClient {
  readonly identity: grpc.Client & import('../gen/csi/v1/Identity.js').IdentityClient;
  readonly controller: grpc.Client & import('../gen/csi/v1/Controller.js').ControllerClient;
  readonly node: grpc.Client & import('../gen/csi/v1/Node.js').NodeClient;
  private readonly defaultTimeoutMs: number;
  private readonly gate: CallGate | undefined;

  /**
   * `maxReconnectBackoffMs` caps grpc-js's wait between connection attempts (default: its own,
   * 1 s growing to 120 s). A client made while its driver still starts fails its first attempt
   * and then waits out the backoff, not the driver: give it a small cap to see the socket come up.
   */
  constructor(endpoint: string, defaultTimeoutMs = 120_000, o: { maxReconnectBackoffMs?: number; gate?: CallGate } = {}) {
    const pkg = csiPackage().csi.v1;
    const target = toGrpcTarget(endpoint);
    const credentials = grpc.credentials.createInsecure();
    const channel: grpc.ChannelOptions = o.maxReconnectBackoffMs === undefined ? {} : {
      'grpc.initial_reconnect_backoff_ms': Math.min(25, o.maxReconnectBackoffMs),
      'grpc.max_reconnect_backoff_ms': o.maxReconnectBackoffMs,
    };
    // One channel shared by the three stubs, as kubelet and the sidecars do.
    this.identity = new pkg.Identity(target, credentials, channel);
    const channelOverride = this.identity.getChannel();
    this.controller = new pkg.Controller(target, credentials, { channelOverride });
    this.node = new pkg.Node(target, credentials, { channelOverride });
    this.defaultTimeoutMs = defaultTimeoutMs;
    this.gate = o.gate;
  }

  close(): void {
    this.identity.close();
  }

  private call<Req, Res>(client: grpc.Client, method: UnaryMethod<Req, Res>, req: Req, opts?: CallOptions): Promise<Res> {
    // The deadline counts from when the call is sent, which a gate may put off.
    const start = (): Promise<Res> => new Promise<Res>((resolve, reject) => {
      const deadline = new Date(Date.now() + (opts?.timeoutMs ?? this.defaultTimeoutMs));
      method.call(client, req, new grpc.Metadata(), { deadline }, (err, value) => {
        if (err) reject(err);
        else if (value === undefined) reject(new Error('empty response'));
        else resolve(value);
      });
    });
    return this.gate === undefined ? start() : this.gate(start);
  }

  getPluginInfo(req: csi.GetPluginInfoRequest = {}, o?: CallOptions) { return this.call<csi.GetPluginInfoRequest, csi.GetPluginInfoResponse__Output>(this.identity, this.identity.GetPluginInfo, req, o); }
  getPluginCapabilities(req: csi.GetPluginCapabilitiesRequest = {}, o?: CallOptions) { return this.call<csi.GetPluginCapabilitiesRequest, csi.GetPluginCapabilitiesResponse__Output>(this.identity, this.identity.GetPluginCapabilities, req, o); }
  probe(req: csi.ProbeRequest = {}, o?: CallOptions) { return this.call<csi.ProbeRequest, csi.ProbeResponse__Output>(this.identity, this.identity.Probe, req, o); }

  createVolume(req: csi.CreateVolumeRequest, o?: CallOptions) { return this.call<csi.CreateVolumeRequest, csi.CreateVolumeResponse__Output>(this.controller, this.controller.CreateVolume, req, o); }
  deleteVolume(req: csi.DeleteVolumeRequest, o?: CallOptions) { return this.call<csi.DeleteVolumeRequest, csi.DeleteVolumeResponse__Output>(this.controller, this.controller.DeleteVolume, req, o); }
  validateVolumeCapabilities(req: csi.ValidateVolumeCapabilitiesRequest, o?: CallOptions) { return this.call<csi.ValidateVolumeCapabilitiesRequest, csi.ValidateVolumeCapabilitiesResponse__Output>(this.controller, this.controller.ValidateVolumeCapabilities, req, o); }
  listVolumes(req: csi.ListVolumesRequest = {}, o?: CallOptions) { return this.call<csi.ListVolumesRequest, csi.ListVolumesResponse__Output>(this.controller, this.controller.ListVolumes, req, o); }
  getCapacity(req: csi.GetCapacityRequest = {}, o?: CallOptions) { return this.call<csi.GetCapacityRequest, csi.GetCapacityResponse__Output>(this.controller, this.controller.GetCapacity, req, o); }
  controllerGetCapabilities(req: csi.ControllerGetCapabilitiesRequest = {}, o?: CallOptions) { return this.call<csi.ControllerGetCapabilitiesRequest, csi.ControllerGetCapabilitiesResponse__Output>(this.controller, this.controller.ControllerGetCapabilities, req, o); }
  controllerExpandVolume(req: csi.ControllerExpandVolumeRequest, o?: CallOptions) { return this.call<csi.ControllerExpandVolumeRequest, csi.ControllerExpandVolumeResponse__Output>(this.controller, this.controller.ControllerExpandVolume, req, o); }
  createSnapshot(req: csi.CreateSnapshotRequest, o?: CallOptions) { return this.call<csi.CreateSnapshotRequest, csi.CreateSnapshotResponse__Output>(this.controller, this.controller.CreateSnapshot, req, o); }
  deleteSnapshot(req: csi.DeleteSnapshotRequest, o?: CallOptions) { return this.call<csi.DeleteSnapshotRequest, csi.DeleteSnapshotResponse__Output>(this.controller, this.controller.DeleteSnapshot, req, o); }
  listSnapshots(req: csi.ListSnapshotsRequest, o?: CallOptions) { return this.call<csi.ListSnapshotsRequest, csi.ListSnapshotsResponse__Output>(this.controller, this.controller.ListSnapshots, req, o); }

  nodeStageVolume(req: csi.NodeStageVolumeRequest, o?: CallOptions) { return this.call<csi.NodeStageVolumeRequest, csi.NodeStageVolumeResponse__Output>(this.node, this.node.NodeStageVolume, req, o); }
  nodeUnstageVolume(req: csi.NodeUnstageVolumeRequest, o?: CallOptions) { return this.call<csi.NodeUnstageVolumeRequest, csi.NodeUnstageVolumeResponse__Output>(this.node, this.node.NodeUnstageVolume, req, o); }
  nodePublishVolume(req: csi.NodePublishVolumeRequest, o?: CallOptions) { return this.call<csi.NodePublishVolumeRequest, csi.NodePublishVolumeResponse__Output>(this.node, this.node.NodePublishVolume, req, o); }
  nodeUnpublishVolume(req: csi.NodeUnpublishVolumeRequest, o?: CallOptions) { return this.call<csi.NodeUnpublishVolumeRequest, csi.NodeUnpublishVolumeResponse__Output>(this.node, this.node.NodeUnpublishVolume, req, o); }
  nodeGetVolumeStats(req: csi.NodeGetVolumeStatsRequest, o?: CallOptions) { return this.call<csi.NodeGetVolumeStatsRequest, csi.NodeGetVolumeStatsResponse__Output>(this.node, this.node.NodeGetVolumeStats, req, o); }
  nodeExpandVolume(req: csi.NodeExpandVolumeRequest, o?: CallOptions) { return this.call<csi.NodeExpandVolumeRequest, csi.NodeExpandVolumeResponse__Output>(this.node, this.node.NodeExpandVolume, req, o); }
  nodeGetCapabilities(req: csi.NodeGetCapabilitiesRequest = {}, o?: CallOptions) { return this.call<csi.NodeGetCapabilitiesRequest, csi.NodeGetCapabilitiesResponse__Output>(this.node, this.node.NodeGetCapabilities, req, o); }
  nodeGetInfo(req: csi.NodeGetInfoRequest = {}, o?: CallOptions) { return this.call<csi.NodeGetInfoRequest, csi.NodeGetInfoResponse__Output>(this.node, this.node.NodeGetInfo, req, o); }
}

/** The gRPC status code of an error thrown by a call, or undefined for other errors. */
export function grpcCode(err: unknown): grpc.status | undefined {
  if (typeof err === 'object' && err !== null && 'code' in err && typeof (err as { code: unknown }).code === 'number') {
    return (err as { code: grpc.status }).code;
  }
  return undefined;
}
