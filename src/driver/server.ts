// Starts the driver: opens the pools, binds the gRPC server to its unix socket (refusing a live one), and stops cleanly.
import { createBackend } from '../backends/registry.js';
import { promises as fs } from 'node:fs';
import * as net from 'node:net';
import { getHeapStatistics } from 'node:v8';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { csiDefinition, type CsiServiceDefinition } from '../csi/proto.js';
import { connectKube } from '../kube/kube-client.js';
import { ClaimReasonEvents } from './cluster/claim-reasons/claim-reason-events.js';
import { startNodeLoss } from './cluster/node-loss/node-loss.js';
import { LimitReports } from './cluster/limit-reports.js';
import { OrphanCheck } from './cluster/orphans/orphan-check.js';
import { choosePoolsAtStart } from './cluster/profiles/start-choice.js';
import { ProfileReload } from './cluster/profiles/profile-reload.js';
import { TemplateCapacity } from './cluster/template-capacity/template-capacity.js';
import { VolumeCatalog } from '../catalog/volume-catalog.js';
import { log } from '../util/log.js';
import type { DriverConfig } from './context/config.js';
import { DriverContext, reservationBookFor } from './context/context.js';
import { controllerService } from './controller/service.js';
import { identityService } from './controller/identity.js';
import { nodeService } from './node/service.js';
import type { RpcObserver } from './rpc/observer.js';
import { adaptService, UndecodableRequest } from './rpc/adapter.js';

export interface RunningDriver {
  ctx: DriverContext;
  socketPath: string;
  /** The orphan check, when the driver has API access and it is not turned off. */
  orphans?: OrphanCheck;
  /** The pool profiles' follower, when the driver has API access and a --pool-config directory. */
  profiles?: ProfileReload;
  /** The template capacity publisher, campaigning for its Lease. */
  templateCapacity?: TemplateCapacity;
  stop(): Promise<void>;
}

/** unix:///a/b.sock -> /a/b.sock; anything else is refused. */
export function socketPathOf(endpoint: string): string {
  const m = /^unix:\/\/(\/.+)$/.exec(endpoint) ?? /^unix:(\/.+)$/.exec(endpoint);
  if (!m?.[1]) throw new Error(`--endpoint "${endpoint}" must be unix:///absolute/path.sock`);
  return m[1];
}

/** True when some process accepts connections on the socket. */
function socketInUse(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const conn = net.connect(socketPath);
    conn.once('connect', () => { conn.destroy(); resolve(true); });
    conn.once('error', () => resolve(false));
  });
}

async function prepareSocket(socketPath: string): Promise<void> {
  await fs.mkdir(path.dirname(socketPath), { recursive: true, mode: 0o750 });
  let st;
  try {
    st = await fs.lstat(socketPath);
  } catch {
    return;
  }
  if (!st.isSocket()) throw new Error(`${socketPath} exists and is not a socket; refusing to replace it`);
  if (await socketInUse(socketPath)) throw new Error(`${socketPath} is in use by another process (is another driver running?)`);
  await fs.unlink(socketPath); // left by a driver that died
}

/**
 * The largest message the server accepts. The largest request within the spec's size limits
 * is a NodePublishVolumeRequest of 65.5 KiB on the wire (two 4095-byte paths, three 4 KiB maps
 * and 4 KiB of mount flags, the maps and the flags packed with as many entries as they can
 * hold; test/driver/bounds.test.ts builds it). The spec does not bound repeated messages, but
 * the only long ones, topologies in accessibility_requirements, hold a single node here
 * (csi-provisioner runs with --node-deployment and --strict-topology). 128 KiB holds that
 * twice over. It is kept that low because what a call holds in memory is its message, and
 * then its decoded strings: at grpc-js's 4 MiB (or even 2 MiB), 241 concurrent CreateVolume
 * calls with a 1 MiB parameter took the driver past its 256 MiB heap and killed it. Beyond
 * the limit the transport refuses the message (RESOURCE_EXHAUSTED, "Received message larger
 * than max") from its length prefix, before buffering or decoding it.
 */
export const MAX_REQUEST_BYTES = 128 * 1024;

/**
 * The service as the contract defines it, except that bytes which do not decode become an
 * UndecodableRequest for the adapter to refuse with INVALID_ARGUMENT: grpc-js would answer
 * INTERNAL ("Error deserializing request"), which tells the caller the driver is at fault.
 */
function serviceOf(name: string): CsiServiceDefinition {
  const definition = csiDefinition()[`csi.v1.${name}`];
  if (definition === undefined) throw new Error(`csi.v1.${name} is not a service of the contract`);
  const tolerant: CsiServiceDefinition = {};
  for (const [method, m] of Object.entries(definition)) {
    tolerant[method] = {
      ...m,
      requestDeserialize: (bytes: Buffer) => {
        try {
          return m.requestDeserialize(bytes);
        } catch (err) {
          return new UndecodableRequest(err instanceof Error ? err.message : String(err));
        }
      },
    };
  }
  return tolerant;
}

/** `makeObserver` is called once the pools are open, so metrics can read them. */
export async function startDriver(config: DriverConfig, makeObserver?: (ctx: DriverContext) => RpcObserver): Promise<RunningDriver> {
  const socketPath = socketPathOf(config.endpoint);
  await prepareSocket(socketPath);
  // Credentials are checked before the pools open, so wrong ones stop the start with nothing touched.
  const kube = config.kube !== undefined ? await connectKube(config.kube, config.nodeId, config.vendorVersion) : undefined;
  if (kube !== undefined && config.poolProfiles !== undefined) config.pools = await choosePoolsAtStart(kube, config.nodeId, config.poolProfiles);
  const book = reservationBookFor(config, kube);
  const catalog = await VolumeCatalog.open(config.pools.map(createBackend), { holds: book });
  await config.poolProfiles?.recordOpened(config.pools);
  const ctx = new DriverContext(config, catalog, kube, book);
  const observer = makeObserver?.(ctx);
  // channelz keeps per-call statistics nobody reads here; off, it saves work on every call.
  const server = new grpc.Server({ 'grpc.enable_channelz': 0, 'grpc.max_receive_message_length': MAX_REQUEST_BYTES });
  const identity = serviceOf('Identity');
  const controller = serviceOf('Controller');
  const node = serviceOf('Node');
  server.addService(identity, adaptService(identity, identityService(ctx), observer));
  server.addService(controller, adaptService(controller, controllerService(ctx), observer));
  server.addService(node, adaptService(node, nodeService(ctx), observer));
  await new Promise<void>((resolve, reject) => {
    server.bindAsync(`unix:${socketPath}`, grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve()));
  });
  // Only root (and the socket's group) may talk to a driver that mounts filesystems.
  await fs.chmod(socketPath, 0o660);
  // Capacity and metrics follow other writers of the pools' disks between calls too. unref:
  // the timer never keeps a stopping process alive.
  const limits = kube !== undefined ? new LimitReports(catalog, kube, config.nodeId) : undefined;
  const refresher = setInterval(() => void catalog.refreshAll().then(() => limits?.round()), config.capacityRefreshSeconds * 1000);
  refresher.unref();
  void limits?.round();
  // The claim reasons ride on the node-loss Lease: one node looks for the cluster, so each
  // claim gets one Event, not one per node (deploy/base has no Lease, so no leader and no look).
  const claimReasons = kube !== undefined && config.nodeLoss !== undefined
    ? new ClaimReasonEvents(kube, { driverName: config.driverName, nodeId: config.nodeId, topologyKey: ctx.topologyKey, namespace: config.nodeLoss.namespace, ownPools: () => catalog.poolNames() })
    : undefined;
  const nodeLoss = kube !== undefined && config.nodeLoss !== undefined
    ? startNodeLoss(kube, { driverName: config.driverName, nodeId: config.nodeId, topologyKey: ctx.topologyKey, namespace: config.nodeLoss.namespace }, config.nodeLoss,
      claimReasons !== undefined ? [{ name: 'claim reasons', pass: (stopped, caches) => claimReasons.pass(stopped, caches), endTerm: () => claimReasons.endTerm() }] : [])
    : undefined;
  const orphans = kube !== undefined && config.orphans !== undefined ? new OrphanCheck(ctx, kube, config.orphans) : undefined;
  orphans?.start();
  const profiles = kube !== undefined && config.poolProfiles !== undefined ? new ProfileReload(catalog, kube, config.nodeId, config.poolProfiles, config.pools) : undefined;
  profiles?.start(config.capacityRefreshSeconds * 1000);
  const template = kube !== undefined && config.poolProfiles !== undefined && config.templateCapacity !== undefined
    ? new TemplateCapacity(kube, config.poolProfiles, config.driverName, config.nodeId, config.templateCapacity)
    : undefined;
  template?.start();
  log('info', 'driver started', {
    endpoint: config.endpoint, nodeId: config.nodeId, driverName: config.driverName,
    pools: catalog.poolStats().map((p) => ({ name: p.name, capacityBytes: p.capacityBytes, volumes: p.volumes, quarantined: p.quarantinedVolumes })),
    // The heap limit V8 really applies (from NODE_OPTIONS or flags), so a deployment can see that its memory settings took.
    heapLimitBytes: getHeapStatistics().heap_size_limit,
  });
  return {
    ctx,
    socketPath,
    ...(orphans !== undefined ? { orphans } : {}),
    ...(profiles !== undefined ? { profiles } : {}),
    ...(template !== undefined ? { templateCapacity: template } : {}),
    stop: async () => {
      clearInterval(refresher);
      profiles?.stop();
      await template?.close();
      // Released first, so another node's driver takes over while this one drains its calls.
      await nodeLoss?.close();
      await orphans?.stop();
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => { server.forceShutdown(); resolve(); }, 10_000);
        server.tryShutdown(() => { clearTimeout(timer); resolve(); });
      });
      await fs.rm(socketPath, { force: true });
    },
  };
}
