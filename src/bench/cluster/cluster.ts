// A simulated cluster: the API store, the control-plane controllers, and per node a real driver with its provisioner, capacity publisher and kubelet.
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { V1Node, V1PersistentVolume, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { ObjectStore } from '../api/object-store.js';
import { ClientView, type ClientPolicy } from '../api/client-view.js';
import { RequestCounts } from '../api/request-counts.js';
import { EventRequests } from '../api/event-requests.js';
import {
  INFORMERS, KCM_SHARED_INFORMERS, SCHEDULER, SNAPSHOT_CONTROLLER, clientForEventSource, ephemeralPolicy, garbageCollectorPolicy, kcm, kubectlPolicy,
  CLUSTER_AUTOSCALER, clusterAutoscalerPolicy, kubeletClient, kubeletPolicy, nodeLifecyclePolicy, podGcPolicy, protectionPolicy, provisionerClient, provisionerPolicy, pvControllerPolicy, schedulerPolicy, snapshotControllerPolicy,
  snapshotterClient, snapshotterPolicy, statefulSetPolicy, taintEvictionPolicy,
} from '../api/upstream-clients.js';
import { EventLog } from '../api/event-log.js';
import { VirtualClock } from '../clock/virtual-clock.js';
import { Runtime } from '../runtime/runtime.js';
import { driverGate } from '../runtime/reconcile-fiber.js';
import type { ExternalWrites } from '../runtime/external-writes.js';
import { SeededRandom } from '../runtime/seeded-random.js';
import { BenchMetrics } from '../runtime/metrics.js';
import type { BenchContext } from '../runtime/context.js';
import { Scheduler } from '../controllers/scheduler/scheduler.js';
import { PvController } from '../controllers/pv-controller.js';
import { ProtectionController } from '../controllers/protection-controller.js';
import { GarbageCollector } from '../controllers/garbage-collector.js';
import { EphemeralController } from '../controllers/ephemeral-controller.js';
import { StatefulSetController } from '../controllers/statefulset-controller.js';
import { ExternalProvisioner } from '../controllers/external-provisioner.js';
import { CapacityPublisher, CAPACITY_POLL_MS } from '../controllers/capacity-publisher.js';
import { Kubelet } from '../controllers/kubelet.js';
import { CentralProvisioner } from '../controllers/central-provisioner.js';
import { CentralRouter } from '../controllers/central-router.js';
import { SnapshotController } from '../controllers/snapshot-controller.js';
import { CsiSnapshotter } from '../controllers/csi-snapshotter.js';
import { PodGc } from '../controllers/pod-gc.js';
import { TaintEviction } from '../controllers/taint-eviction.js';
import { NodeLifecycle } from '../controllers/node-lifecycle.js';
import { ClusterAutoscaler } from '../controllers/autoscaler/cluster-autoscaler.js';
import type { NodeGroupSpec } from '../controllers/autoscaler/node-group.js';
import type { Scoring } from '../controllers/scheduler/capacity-scoring.js';
import { CALL_TIMEOUT_MS } from '../controllers/provisioning-helpers.js';
import { NodeDriver } from '../nodes/node-driver.js';
import { DRIVER_START_CONCURRENCY, DriverStarts, boundedMap } from '../nodes/driver-starts.js';
import { sweep } from '../nodes/sweep.js';
import { rpcErrorText } from '../nodes/csi-errors.js';
import { ANN_LODE_POOLS, ANN_PROVISIONED_BY, LABEL_HOSTNAME, LABEL_SNAPSHOT_MANAGED_BY, LODE_TOPOLOGY_KEY } from '../api/annotations.js';
import { parsePoolsAnnotation } from '../api/node-pools.js';
import type { BenchPoolProfiles } from '../nodes/pool-profiles.js';
import type { LoadedObject } from '../manifests/load-manifests.js';
import { admit } from '../admission/admit.js';
import { invalidMessage } from '../admission/status.js';
import { applyDefaultStorageClass } from '../api/default-storage-class.js';
import { type AnyObject, type Kind, type KindMap } from '../api/kinds.js';
import { API_VERSIONS, KINDS } from '../api/resources.js';
import { parseQuantity } from '../../util/quantity.js';
import { withKubeletConditions } from '../api/node-status.js';
import { ApiServer } from '../apiserver/server.js';
import { writeKubeconfig } from '../apiserver/kubeconfig.js';
import { RealSidecars } from '../sidecars/real-sidecars.js';
import { daemonSetDriverEnv, daemonSetIdentity } from '../sidecars/daemonset-args.js';
import { shippedVersion, type Component, type SidecarsMode } from '../sidecars/components.js';
import { registerPlugin, waitForSocket } from '../sidecars/plugin-registration.js';
import { driverPod } from '../nodes/driver-pod.js';
import { MountTemplate } from '../nodes/mount-template.js';

/** Where external-provisioner runs: one per node (--node-deployment), or one for the cluster. */
export type ProvisioningMode = 'distributed' | 'central';

export interface ClusterOptions {
  /** Directory this run owns; removed on teardown. */
  workDir: string;
  seed: number;
  driverName?: string;
  capacityPollMs?: number;
  provisioning?: ProvisioningMode;
  /**
   * Give every driver API access, as `--kubeconfig` does in a deployment: the cluster serves
   * its own API on loopback (see startDriverApi) and each driver gets its kubeconfig.
   */
  driverApi?: boolean;
  /** More flags for every driver (a scenario's `driverFlags`). */
  driverFlags?: readonly string[];
  /** A scenario's `poolProfiles`: a Node without the pools annotation whose label names a profile gets a driver that picks its pools by that label. */
  poolProfiles?: BenchPoolProfiles;
  /** Told about each teardown action and problem. */
  log?: (line: string) => void;
  /**
   * `real`: per node the real csi-provisioner, csi-snapshotter, csi-resizer and
   * node-driver-registrar, and one real snapshot-controller, in place of the re-enacted ones
   * (startRealSidecars must be awaited before the first Node is applied).
   */
  sidecars?: SidecarsMode;
  /**
   * Show each node's DaemonSet Pod (real sidecars always do: their provisioner reads it), its
   * driver serving /metrics that the API's pod proxy reaches, as `kubectl lode status` reads them.
   */
  driverPods?: boolean;
  /** A scenario's `nodeGroups`: a cluster-autoscaler runs and adds nodes of these groups (see controllers/autoscaler). */
  nodeGroups?: readonly NodeGroupSpec[];
  /** The scheduler's StorageCapacityScoring (`storageCapacityScoring`); default `none`, the feature gate off. */
  scoring?: Scoring;
  /**
   * Reconciles parked on driver calls at most at once (Runtime.overlap): calls of different
   * nodes run side by side; 1 runs every reconcile to its end before the next. Default DRIVER_CALL_OVERLAP.
   */
  overlap?: number;
}

/** Reconciles that may wait on driver calls at once, by default. */
export const DRIVER_CALL_OVERLAP = 8;

/** The uid of the DaemonSet that owns each node's sidecar Pod: not served, only named in ownerReferences. */
const DAEMONSET_UID = '6b1d4a7e-0000-4000-8000-00000000da75';

/** Everything that runs for one node. */
export interface SimNode {
  name: string;
  driver: NodeDriver;
  /** The driver's segment from NodeGetInfo. */
  topology: Record<string, string>;
  /** Node mode only. */
  provisioner?: ExternalProvisioner;
  capacity?: CapacityPublisher;
  /** csi-snapshotter --node-deployment, when the driver advertises CREATE_DELETE_SNAPSHOT. */
  snapshotter?: CsiSnapshotter;
  kubelet: Kubelet;
  /** Its re-enacted sidecars exited with its killed driver and wait for it to come back. */
  sidecarsDown?: boolean;
}

export class Cluster {
  readonly clock = new VirtualClock();
  readonly store: ObjectStore;
  readonly events: EventLog;
  readonly metrics = new BenchMetrics();
  readonly runtime: Runtime;
  /** The shared parts of every controller's context; each controller gets its own client view of the store on top. */
  readonly ctx: BenchContext;
  /** API requests by client, verb and resource (see docs/bench.md, "API requests"). */
  readonly requests = new RequestCounts();
  /** The scenario's own writes (manifests applied, steps), as kubectl would send them. */
  readonly kubectl: ClientView;
  readonly scheduler: Scheduler;
  /** With node groups: the cluster-autoscaler. */
  readonly autoscaler: ClusterAutoscaler | undefined;
  readonly nodes = new Map<string, SimNode>();
  readonly controllerErrors: string[] = [];
  /** Static PV volumes the bench created on a driver, playing the administrator: pv name -> node. */
  private readonly staticVolumes = new Map<string, string>();
  private readonly log: (line: string) => void;
  private tornDown = false;
  /** Virtual time of the last object write or event (marks excluded). */
  lastActivityMs = 0;
  readonly mode: ProvisioningMode;
  /** Kubelets of nodes without Lode pools, by node. */
  private readonly plainKubelets = new Map<string, Kubelet>();
  /**
   * Nodes deleted or shut down in this run, and how: their kubelet, sidecars and driver no
   * longer act (the driver is killed; its disks stay until teardown).
   */
  readonly lostNodes = new Map<string, 'deleted' | 'shutdown'>();
  private readonly driverKills: Promise<void>[] = [];
  private readonly nodeLifecycle: NodeLifecycle;
  private readonly router: CentralRouter;
  private readonly centralCapacity: CapacityPublisher | undefined;
  private readonly driverStarts = new DriverStarts();
  /**
   * The mount template every node's namespace is copied from: the one the environment names, or
   * one made for this run; made (or adopted) once, when the first driver starts.
   */
  private mountTemplate: Promise<MountTemplate> | undefined;
  /** The API the drivers reach (driverApi), and the kubeconfig in the work dir that names it. */
  private driverApi: { server: ApiServer; kubeconfig: string } | undefined;
  /**
   * With driverApi, the settings the DaemonSet gives its driver (daemonSetDriverEnv), read once
   * before any driver starts; undefined while the drivers get no API access.
   */
  private driverEnv: Record<string, string> | undefined;
  readonly sidecars: SidecarsMode;
  private realSidecars: RealSidecars | undefined;
  /** Unexpected exits of real sidecar processes (each was started again). */
  readonly sidecarExits: string[] = [];
  /** Exits of real sidecars that lost their killed driver's connection, as upstream's do (each was started again). */
  readonly sidecarExitsWithDriver: string[] = [];

  constructor(readonly opts: ClusterOptions) {
    this.store = new ObjectStore(this.clock);
    this.events = new EventLog(() => this.clock.now());
    this.runtime = new Runtime(this.clock);
    this.runtime.overlap = opts.overlap ?? DRIVER_CALL_OVERLAP;
    this.log = opts.log ?? (() => {});
    this.ctx = {
      store: this.store, clock: this.clock, events: this.events, random: new SeededRandom(opts.seed), metrics: this.metrics,
      driverName: opts.driverName ?? 'lode.csi.dev', systemNamespace: 'lode-system',
    };
    this.kubectl = new ClientView(this.store, this.requests, kubectlPolicy);
    const eventRequests = new EventRequests(this.requests, (source) => clientForEventSource(source, this.driverName));
    this.events.onEvent((e) => eventRequests.observe(e));
    mkdirSync(join(opts.workDir, 'nodes'), { recursive: true });
    const now = this.clock.now();
    this.requests.informer(SCHEDULER, INFORMERS.scheduler, now);
    this.requests.informer(KCM_SHARED_INFORMERS, INFORMERS.controllerManager, now);
    this.requests.informer(kcm('generic-garbage-collector'), INFORMERS.garbageCollector, now);
    this.requests.informer(SNAPSHOT_CONTROLLER, INFORMERS.snapshotController, now);
    // Registration order is the runtime's priority order (see Runtime).
    this.runtime.register(new EphemeralController(this.as(ephemeralPolicy)));
    this.scheduler = new Scheduler(this.as(schedulerPolicy), opts.scoring ?? 'none');
    this.runtime.register(this.scheduler);
    this.runtime.register(new PvController(this.as(pvControllerPolicy)));
    this.runtime.register(new ProtectionController(this.as(protectionPolicy)));
    this.runtime.register(new GarbageCollector(this.as(garbageCollectorPolicy)));
    this.runtime.register(new StatefulSetController(this.as(statefulSetPolicy)));
    this.sidecars = opts.sidecars ?? 'reenacted';
    // With real sidecars the real snapshot-controller does this work.
    if (this.sidecars === 'reenacted') this.runtime.register(new SnapshotController(this.as(snapshotControllerPolicy)));
    this.nodeLifecycle = new NodeLifecycle(this.as(nodeLifecyclePolicy));
    this.runtime.register(this.nodeLifecycle);
    this.runtime.register(new TaintEviction(this.as(taintEvictionPolicy)));
    this.runtime.register(new PodGc(this.as(podGcPolicy)));
    if (opts.nodeGroups !== undefined && opts.nodeGroups.length > 0) {
      this.requests.informer(CLUSTER_AUTOSCALER, INFORMERS.clusterAutoscaler, now);
      // A new node registers as an applied Node does (no kubectl request: its kubelet creates it): its driver (with the pools of its profile or annotation) and its kubelet.
      this.autoscaler = new ClusterAutoscaler(this.as(clusterAutoscalerPolicy), {
        groups: opts.nodeGroups, addNode: (node) => this.addNode(node),
      });
      this.runtime.register(this.autoscaler);
      this.autoscaler.start();
    } else {
      this.autoscaler = undefined;
    }
    this.mode = opts.provisioning ?? 'distributed';
    if (this.sidecars === 'real' && this.mode === 'central') throw new Error('sidecars: real runs csi-provisioner per node as the DaemonSet does (--node-deployment); it needs provisioning: distributed');
    this.router = new CentralRouter(this.metrics);
    if (this.mode === 'central') {
      this.requests.informer(provisionerClient(undefined), INFORMERS.provisionerCentral, now);
      // The capacity owner lookup (--capacity-ownerref-level=1): the provisioner's own pod, once.
      this.requests.record(provisionerClient(undefined), 'get', 'pods');
      const central = this.as(provisionerPolicy(undefined));
      const capacity = new CapacityPublisher(central, 'capacity', {
        targets: () => this.router.segments().map((e) => ({ segment: e.segment, getCapacity: (req) => this.router.getCapacity(e, req, CALL_TIMEOUT_MS) })),
        managedBy: 'external-provisioner',
        pollMs: opts.capacityPollMs ?? CAPACITY_POLL_MS,
      });
      this.centralCapacity = capacity;
      this.runtime.register(new CentralProvisioner(central, this.router, () => capacity.refresh()));
      this.runtime.register(capacity);
      capacity.start();
    }
    // The last virtual instant anything changed: when the cluster settled.
    // Lease renewals (leader-election heartbeats) are no change of the cluster's state.
    for (const kind of KINDS) if (kind !== 'Lease') this.store.watch(kind, () => { this.lastActivityMs = this.clock.now(); });
    // However a Node goes (a step, a client's DELETE through the API), the machine behind it is gone.
    this.store.watch('Node', (e) => { if (e.type === 'DELETED') this.loseNode(e.object.metadata?.name ?? '', 'deleted'); });
    this.events.onEvent((e) => { if (e.reason !== 'Mark') this.lastActivityMs = this.clock.now(); });
    this.runtime.onError((c, key, err) => {
      this.controllerErrors.push(`${c} ${key}: ${err instanceof Error ? err.message : String(err)}`);
    });
  }

  get driverName(): string {
    return this.ctx.driverName;
  }

  /** The kubelet's client for a node: its informers open when it starts, before it registers the Node. */
  private startKubeletClient(node: string): BenchContext {
    this.requests.informer(kubeletClient(node), INFORMERS.kubelet, this.clock.now());
    return this.as(kubeletPolicy(node));
  }

  /** A controller's context: the shared parts with a client view of the store of its own. */
  private as(policy: ClientPolicy): BenchContext {
    return { ...this.ctx, store: new ClientView(this.store, this.requests, policy) };
  }

  /** The API requests so far (informers' watches counted up to now). */
  apiRequests(): ReturnType<RequestCounts['rows']> {
    return this.requests.rows(this.clock.now());
  }

  /** Creates or replaces objects, starting a driver for each new Node that lists Lode pools. */
  async apply(objects: LoadedObject[]): Promise<void> {
    // The drivers of new Nodes start in parallel (bounded); the objects are still applied one by one, in order.
    for (const { kind, object } of objects) {
      const name = object.metadata?.name ?? '';
      const pools = kind === 'Node' ? this.driverPools(object as V1Node) : undefined;
      if (kind === 'Node' && this.lostNodes.has(name)) throw new Error(`Node "${name}" was ${this.lostNodes.get(name)} in this run; the bench does not bring a lost node back`);
      if (kind === 'Node' && pools !== undefined && !this.nodes.has(name) && this.store.get('Node', name) === undefined) {
        this.driverStarts.start(name, this.newDriver(name, pools));
      }
    }
    try {
      for (const { kind, object } of objects) await this.applyOne(kind, structuredClone(object));
    } catch (err) {
      this.driverStarts.dropQueued();
      throw err;
    }
  }

  /**
   * Serves this cluster's API on a free loopback port and writes a kubeconfig for it into
   * the work dir, before any driver starts, so drivers given `--kubeconfig` find it at start;
   * each driver also gets the DaemonSet's settings (a DaemonSet the bench cannot follow fails
   * here, before any driver starts). A driver's reads are answered from the store while the
   * runtime awaits its CSI call, so the run stays as deterministic as without it.
   */
  async startDriverApi(): Promise<string> {
    this.driverEnv = daemonSetDriverEnv();
    return this.startApi();
  }

  /** The run's own API on loopback and its kubeconfig in the work dir (for drivers with API access and for real sidecars). */
  private async startApi(): Promise<string> {
    if (this.driverApi !== undefined) return this.driverApi.kubeconfig;
    const server = new ApiServer({ host: '127.0.0.1', port: 0 });
    const url = await server.start();
    server.attach(this);
    const kubeconfig = join(this.opts.workDir, 'kubeconfig');
    writeKubeconfig(kubeconfig, url);
    this.driverApi = { server, kubeconfig };
    return kubeconfig;
  }

  /**
   * For `sidecars: real`: finds the binaries (a MissingToolError names what is missing),
   * serves the API they talk to, and starts the cluster's snapshot-controller. Each node's
   * sidecars start as its Node is applied.
   */
  async startRealSidecars(): Promise<void> {
    if (this.sidecars !== 'real' || this.realSidecars !== undefined) return;
    const kubeconfig = await this.startApi();
    const real = new RealSidecars({
      workDir: this.opts.workDir, kubeconfig, namespace: daemonSetIdentity().namespace, driverName: this.driverName,
      onExit: (name, how, withDriver) => {
        (withDriver ? this.sidecarExitsWithDriver : this.sidecarExits).push(`${name} ${how}`);
        this.log(`${name} ${how}${withDriver ? ' as its driver was killed' : ''}; restarting`);
      },
    });
    this.realSidecars = real;
    await real.prepare();
    real.startController();
  }

  /**
   * A node with the real sidecars, in the order a node joining a cluster sees: the DaemonSet's
   * Pod, its containers, then kubelet's plugin watcher finds the registrar's socket and
   * registers the driver: GetInfo, NodeGetInfo on the driver, the Node's topology labels and
   * the CSINode (the topology keys the provisioner's --strict-topology reads), then
   * NotifyRegistrationStatus.
   */
  private async addRealNode(node: V1Node, driver: NodeDriver, kubeletCtx: BenchContext, kubelet: Kubelet, real: RealSidecars): Promise<void> {
    const name = node.metadata?.name ?? '';
    // Known from here on, so a failure below still tears its driver down.
    const entry: SimNode = { name, driver, topology: {}, kubelet };
    this.nodes.set(name, entry);
    const pod = driverPod(name, DAEMONSET_UID).metadata?.name ?? '';
    const caps = await driver.client.controllerGetCapabilities({});
    const snapshots = (caps.capabilities ?? []).some((c) => c.rpc?.type === 'CREATE_DELETE_SNAPSHOT');
    // The provisioner's owner lookup (--capacity-ownerref-level=1) reads this Pod as it starts.
    this.kubectl.create('Pod', driverPod(name, DAEMONSET_UID));
    const nodeDir = join(this.opts.workDir, 'nodes', name);
    const started = real.startNode(name, driver.socketPath, nodeDir, pod, snapshots);
    await waitForSocket(started.registrationSocket, () => started.registrar.running || started.registrar.restarts < 3);
    await registerPlugin(started.registrationSocket, async (info) => {
      if (info.name !== this.driverName) throw new Error(`the registrar names driver "${info.name}", not ${this.driverName}`);
      const ni = await driver.client.nodeGetInfo({});
      const topology = { ...(ni.accessible_topology?.segments ?? {}) };
      entry.topology = topology;
      node.metadata!.labels = { ...node.metadata!.labels, ...topology };
      const created = kubeletCtx.store.create('Node', withKubeletConditions(node, this.clock.date()));
      kubeletCtx.store.create('CSINode', {
        apiVersion: 'storage.k8s.io/v1', kind: 'CSINode',
        metadata: { name, ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name, uid: created.metadata?.uid ?? '' }] },
        spec: { drivers: [{ name: this.driverName, nodeID: ni.node_id ?? name, topologyKeys: Object.keys(topology).sort() }] },
      });
    });
    this.runtime.register(kubelet);
  }

  /**
   * Real sidecars are up on every node: each node's provisioner has published a capacity object
   * for every class of the driver (when the CSIDriver asks for capacity). The re-enacted publisher
   * does so as its node is added; the real one some wall time after it starts, and a pod applied
   * in between would be turned away for want of capacity, which no run with re-enacted sidecars
   * shows. A DaemonSet pod is Ready only once its containers are, which is what this stands for.
   */
  realSidecarsReady(): boolean {
    if (this.realSidecars === undefined) return true;
    const wantsCapacity = this.store.get('CSIDriver', this.driverName)?.spec?.storageCapacity === true;
    if (!wantsCapacity) return true;
    // As the publisher: WaitForFirstConsumer classes only (the DaemonSet does not set --capacity-for-immediate-binding).
    const classes = this.store.list('StorageClass').filter((c) => c.provisioner === this.driverName && c.volumeBindingMode === 'WaitForFirstConsumer').length;
    const capacities = this.store.list('CSIStorageCapacity');
    for (const name of this.nodes.keys()) {
      if (this.lostNodes.has(name)) continue;
      const mine = capacities.filter((c) => c.metadata?.labels?.['csi.storage.k8s.io/managed-by'] === `external-provisioner-${name}`).length;
      if (mine < classes) return false;
    }
    return true;
  }

  /** The pids of a node's running real sidecar processes (none without real sidecars). */
  realSidecarPids(node: string): number[] {
    return this.realSidecars?.nodePids(node) ?? [];
  }

  /** Every component of the run: re-enacted ones with the upstream they model, real ones with their binary's version. */
  components(): Component[] {
    const re = (name: string, scope: string, version: string): Component => ({ name, scope, implementation: 'reenacted', version });
    const out: Component[] = [
      re('kube-scheduler', 'cluster', 'models kube-scheduler (VolumeBinding, capacity tracking)'),
      re('kube-controller-manager', 'cluster', 'models its PV, protection, ephemeral, StatefulSet, GC, node-lifecycle, pod-GC and taint-eviction controllers'),
    ];
    if (this.realSidecars !== undefined) out.push(...this.realSidecars.components());
    // Not in the DaemonSet: the release of its csi-snapshotter image, whose common controller it models.
    else out.push(re('snapshot-controller', 'cluster', shippedVersion('csi-snapshotter').replace(/^models csi-snapshotter:(\S+) .*$/, 'models the snapshot-controller of external-snapshotter $1, the release of the DaemonSet\'s csi-snapshotter')));
    if (this.mode === 'central') out.push(re('csi-provisioner', 'cluster', shippedVersion('csi-provisioner')));
    if (this.autoscaler !== undefined) out.push(re('cluster-autoscaler', 'cluster', 'models the scale-up loop of cluster-autoscaler 1.36 (template-node label, scheduler filters on template nodes, TriggeredScaleUp and NotTriggerScaleUp); no scale-down'));
    for (const n of this.nodes.values()) {
      if (this.realSidecars === undefined) {
        if (n.provisioner) out.push(re('csi-provisioner', n.name, shippedVersion('csi-provisioner')));
        if (n.snapshotter) out.push(re('csi-snapshotter', n.name, shippedVersion('csi-snapshotter')));
        out.push(re('node-driver-registrar', n.name, 'models kubelet plugin registration (Node topology labels)'));
      }
      out.push(re('kubelet', n.name, 'models kubelet\'s volume manager and pod status'));
    }
    return out;
  }

  /**
   * A Node's pools: its `lode.csi.dev/pools` annotation, else the scenario's profile of its
   * label's value (the driver picks that one itself); undefined: no Lode on the node.
   */
  private driverPools(node: V1Node): { annotation: string } | { profile: string } | undefined {
    const annotation = node.metadata?.annotations?.[ANN_LODE_POOLS];
    if (annotation !== undefined) return { annotation };
    const profiles = this.opts.poolProfiles;
    const value = profiles !== undefined ? node.metadata?.labels?.[profiles.label] : undefined;
    return value !== undefined && profiles?.profiles.has(value) ? { profile: value } : undefined;
  }

  private newDriver(name: string, pools: { annotation: string } | { profile: string }): NodeDriver {
    const profiles = this.opts.poolProfiles;
    return new NodeDriver({
      nodeName: name, nodeDir: join(this.opts.workDir, 'nodes', name), driverName: this.driverName,
      pools: 'annotation' in pools ? parsePoolsAnnotation(pools.annotation) : profiles?.profiles.get(pools.profile) ?? [],
      // Only a driver with API access can read its Node's label; without, the profile's pools are its own --pool flags.
      ...('profile' in pools && profiles !== undefined && this.driverApi !== undefined ? { profiles } : {}),
      // With API access, the settings the DaemonSet gives its driver too (its features on and off as there).
      ...(this.driverApi !== undefined && this.driverEnv !== undefined ? { kubeconfig: this.driverApi.kubeconfig, env: this.driverEnv } : {}),
      ...(this.opts.driverFlags !== undefined ? { extraArgs: this.opts.driverFlags } : {}),
      metrics: this.showsDriverPods,
      mountTemplate: () => this.template(),
      gate: driverGate(),
    });
  }

  /** The run's mount template (see mountTemplate); the drivers starting in parallel share the one promise. */
  private template(): Promise<MountTemplate> {
    this.mountTemplate ??= MountTemplate.forRun(this.opts.workDir);
    return this.mountTemplate;
  }

  /** Ends the run's mount template if the run made it, after every node's namespace copied from it has ended. */
  private async closeTemplate(): Promise<string[]> {
    const t = this.mountTemplate;
    this.mountTemplate = undefined;
    // A template that could not be made failed the driver starts that asked for it: nothing to end.
    const made = await t?.catch(() => undefined);
    if (made === undefined) return [];
    try {
      await made.close();
      return [];
    } catch (err) {
      return [`ending the mount template: ${(err as Error).message}`];
    }
  }

  /** Whether the API shows each node's DaemonSet Pod (driverPods, or real sidecars). */
  private get showsDriverPods(): boolean {
    return this.opts.driverPods === true || this.sidecars === 'real';
  }

  /** The DaemonSet's Pod on a node that has just joined, as the DaemonSet controller makes it (with driverPods). */
  private addDriverPod(node: string): void {
    if (this.opts.driverPods === true && this.sidecars !== 'real') this.kubectl.create('Pod', driverPod(node, DAEMONSET_UID));
  }

  /**
   * Where the pod proxy reaches `port` of a driver's DaemonSet Pod: the loopback port its
   * driver serves /metrics on, when `port` is the Pod's declared metrics port and the driver
   * runs; undefined for anything else (no process of the bench stands behind it).
   */
  podPort(namespace: string, pod: string, port: number): number | undefined {
    const p = this.store.get('Pod', pod, namespace);
    if (p === undefined || !(p.metadata?.ownerReferences ?? []).some((r) => r.uid === DAEMONSET_UID)) return undefined;
    const node = this.nodes.get(p.spec?.nodeName ?? '');
    if (node === undefined || this.lostNodes.has(node.name)) return undefined;
    const declared = (p.spec?.containers ?? []).flatMap((c) => c.ports ?? []).find((x) => x.name === 'metrics')?.containerPort;
    return declared === port ? node.driver.metricsPort : undefined;
  }

  private async applyOne(kind: Kind, object: AnyObject): Promise<void> {
    const name = object.metadata?.name ?? '';
    const ns = object.metadata?.namespace;
    // kubectl apply reads the object first, then creates it or patches it.
    const existing = name ? this.kubectl.get(kind, name, ns) : undefined;
    if (existing !== undefined) {
      // Replace the user-owned parts, keep what controllers wrote (status, bookkeeping annotations).
      const merged = { ...existing, ...object, metadata: { ...existing.metadata, ...object.metadata, resourceVersion: undefined, annotations: { ...(existing.metadata?.annotations ?? {}), ...(object.metadata?.annotations ?? {}) } } };
      if ('status' in existing) (merged as { status?: unknown }).status = (existing as { status?: unknown }).status;
      // Re-applying is an update: immutable fields stay immutable, as kubectl apply finds on a cluster.
      const { errors } = admit(kind, merged as unknown as Record<string, unknown>, existing as unknown as Record<string, unknown>);
      if (errors.length > 0) throw new Error(invalidMessage(kind, API_VERSIONS[kind], name, errors));
      this.kubectl.update(kind, merged as KindMap[typeof kind]);
      return;
    }
    if (kind === 'Node') {
      await this.addNode(object as V1Node);
      return;
    }
    if (kind === 'PersistentVolume') await this.prepareStaticVolume(object as V1PersistentVolume);
    // DefaultStorageClass admission needs the classes the cluster holds now, so it runs here, not at load.
    if (kind === 'PersistentVolumeClaim') applyDefaultStorageClass(object as V1PersistentVolumeClaim, this.store.list('StorageClass'));
    this.kubectl.create(kind, object as KindMap[typeof kind]);
  }

  private async addNode(node: V1Node): Promise<void> {
    const name = node.metadata?.name ?? '';
    node.metadata!.labels = { [LABEL_HOSTNAME]: name, ...(node.metadata?.labels ?? {}) };
    const poolsAnn = this.driverPools(node);
    if (poolsAnn === undefined) {
      // No Lode pools: no driver, but a kubelet still runs the node's pods.
      const absent = new NodeDriver({
        nodeName: name, nodeDir: join(this.opts.workDir, 'nodes', name), driverName: this.driverName, pools: [], installed: false, mountTemplate: () => this.template(),
      });
      const kubeletCtx = this.startKubeletClient(name);
      const kubelet = new Kubelet(kubeletCtx, absent);
      this.plainKubelets.set(name, kubelet);
      kubeletCtx.store.create('Node', withKubeletConditions(node, this.clock.date()));
      this.runtime.register(kubelet);
      return;
    }
    // Through the starts, also when apply began none ahead: a driver whose start fails stays
    // there, so teardown still ends its mount namespace.
    if (!this.driverStarts.has(name)) this.driverStarts.start(name, this.newDriver(name, poolsAnn));
    const driver = await this.driverStarts.take(name);
    const kubeletCtx = this.startKubeletClient(name);
    const kubelet = new Kubelet(kubeletCtx, driver);
    if (this.realSidecars !== undefined) {
      await this.addRealNode(node, driver, kubeletCtx, kubelet, this.realSidecars);
      return;
    }
    if (this.mode === 'central') {
      const info = await driver.client.nodeGetInfo({});
      const topology = { ...(info.accessible_topology?.segments ?? {}) };
      const snapshotter = await this.snapshotterFor(driver);
      this.nodes.set(name, { name, driver, topology, kubelet, ...(snapshotter ? { snapshotter } : {}) });
      this.router.add({ node: name, segment: topology, driver });
      // kubelet's plugin registration copies the driver's topology segments onto the Node's labels.
      node.metadata!.labels = { ...node.metadata!.labels, ...topology };
      kubeletCtx.store.create('Node', withKubeletConditions(node, this.clock.date()));
      this.addDriverPod(name);
      if (snapshotter) this.runtime.register(snapshotter);
      this.runtime.register(kubelet);
      this.centralCapacity?.refresh();
      return;
    }
    const capacityRef: { p?: CapacityPublisher } = {};
    const provisionerCtx = this.as(provisionerPolicy(name));
    this.requests.informer(provisionerClient(name), INFORMERS.provisionerNode, this.clock.now());
    this.requests.record(provisionerClient(name), 'get', 'pods');
    const provisioner = new ExternalProvisioner(provisionerCtx, driver, { onCapacityChange: () => capacityRef.p?.refresh() });
    await provisioner.init();
    const capacity = new CapacityPublisher(provisionerCtx, `capacity/${name}`, {
      targets: () => [{ segment: provisioner.topology, getCapacity: (req) => driver.client.getCapacity(req, { timeoutMs: CALL_TIMEOUT_MS }) }],
      managedBy: `external-provisioner-${name}`,
      pollMs: this.opts.capacityPollMs ?? CAPACITY_POLL_MS,
    });
    capacityRef.p = capacity;
    const snapshotter = await this.snapshotterFor(driver);
    this.nodes.set(name, { name, driver, topology: provisioner.topology, provisioner, capacity, kubelet, ...(snapshotter ? { snapshotter } : {}) });
    node.metadata!.labels = { ...node.metadata!.labels, ...provisioner.topology };
    kubeletCtx.store.create('Node', withKubeletConditions(node, this.clock.date()));
    this.addDriverPod(name);
    this.runtime.register(provisioner);
    this.runtime.register(capacity);
    if (snapshotter) this.runtime.register(snapshotter);
    this.runtime.register(kubelet);
    capacity.start();
  }

  /**
   * The node's csi-snapshotter, as the DaemonSet runs it: it exits at start when the driver
   * does not advertise CREATE_DELETE_SNAPSHOT, so such a node gets none.
   */
  private async snapshotterFor(driver: NodeDriver): Promise<CsiSnapshotter | undefined> {
    const caps = await driver.client.controllerGetCapabilities({});
    if (!(caps.capabilities ?? []).some((c) => c.rpc?.type === 'CREATE_DELETE_SNAPSHOT')) return undefined;
    this.requests.informer(snapshotterClient(driver.nodeName), INFORMERS.csiSnapshotter, this.clock.now());
    return new CsiSnapshotter(this.as(snapshotterPolicy(driver.nodeName)), driver);
  }

  /**
   * A PV of this driver without `provisioned-by` names a volume an administrator made
   * beforehand; the bench makes it on the node the PV's affinity names, with the PV's
   * size, and writes the handle the driver returned into the PV.
   */
  private async prepareStaticVolume(pv: V1PersistentVolume): Promise<void> {
    if (pv.spec?.csi?.driver !== this.driverName || pv.metadata?.annotations?.[ANN_PROVISIONED_BY]) return;
    const terms = pv.spec.nodeAffinity?.required?.nodeSelectorTerms ?? [];
    let nodeName: string | undefined;
    for (const t of terms) for (const e of t.matchExpressions ?? []) {
      if ((e.key === LODE_TOPOLOGY_KEY || e.key === LABEL_HOSTNAME) && e.operator === 'In' && e.values?.length === 1) nodeName = e.values[0];
    }
    const node = nodeName === undefined ? undefined : this.nodes.get(nodeName);
    if (node === undefined) throw new Error(`PersistentVolume "${pv.metadata?.name}": spec.nodeAffinity must name one node with Lode pools (key ${LODE_TOPOLOGY_KEY} or ${LABEL_HOSTNAME}, operator In, one value)`);
    const size = parseQuantity(pv.spec.capacity?.storage ?? '0');
    const r = await node.driver.client.createVolume({
      name: pv.metadata?.name ?? '', capacity_range: { required_bytes: String(size) },
      parameters: { ...(pv.spec.csi.volumeAttributes ?? {}) },
      volume_capabilities: [{ mount: { fs_type: pv.spec.csi.fsType ?? 'ext4', mount_flags: [] }, access_mode: { mode: 'SINGLE_NODE_WRITER' } }],
      accessibility_requirements: { requisite: [{ segments: node.topology }], preferred: [{ segments: node.topology }] },
    });
    pv.spec.csi.volumeHandle = r.volume?.volume_id ?? pv.spec.csi.volumeHandle;
    this.staticVolumes.set(pv.metadata?.name ?? '', node.name);
  }

  /** Deletes an object the way kubectl would: pods on a node go through their kubelet. */
  delete(kind: Kind, name: string, namespace?: string): boolean {
    const obj = this.store.get(kind, name, namespace);
    if (obj === undefined) return false;
    const onNode = kind === 'Pod' && Boolean((obj as KindMap['Pod']).spec?.nodeName);
    return this.kubectl.delete(kind, name, namespace, onNode);
  }

  node(name: string): SimNode {
    const n = this.nodes.get(name);
    if (n === undefined) throw new Error(`no node "${name}" with a Lode driver`);
    return n;
  }

  /**
   * The node stops acting: its kubelet, external-provisioner, capacity publisher and
   * csi-snapshotter are taken out of the runtime and its driver is killed, as when the
   * machine is gone. Its disks, mounts and volumes stay for the teardown to clean. Nothing
   * is written to the API here: what upstream then does is up to the control plane's
   * controllers (pod GC for a deleted Node, node lifecycle for a silent one).
   */
  private loseNode(name: string, how: 'deleted' | 'shutdown'): void {
    if (this.lostNodes.has(name)) return;
    const n = this.nodes.get(name);
    const plain = this.plainKubelets.get(name);
    if (n === undefined && plain === undefined) return;
    this.lostNodes.set(name, how);
    if (plain !== undefined) this.runtime.unregister(plain);
    if (n === undefined) return;
    for (const c of [n.provisioner, n.capacity, n.snapshotter, n.kubelet]) if (c !== undefined) this.runtime.unregister(c);
    // Its real sidecars go with the machine.
    if (this.realSidecars !== undefined) this.driverKills.push(this.realSidecars.stopNode(name));
    this.driverKills.push(n.driver.kill());
  }

  /** A node shut down (power off, kernel panic): it stops acting, and its kubelet stops posting status. */
  shutdownNode(name: string): void {
    if (this.store.get('Node', name) === undefined) throw new Error(`shutdownNode: no Node "${name}"`);
    this.loseNode(name, 'shutdown');
    this.nodeLifecycle.kubeletStopped(name);
  }

  /**
   * SIGKILL a node's driver. Its kubelet sees UNAVAILABLE until it is back. Its csi-provisioner
   * and csi-snapshotter exit as their connection to it is lost (csi-lib-utils'
   * ExitOnConnectionLoss, since kubernetes-csi/external-provisioner 20cb5e55), and kubelet's
   * restarts of them wait for its socket: re-enacted, they stop here and start again with it;
   * real ones exit on their own and the bench's supervision restarts them.
   */
  async killDriver(name: string): Promise<void> {
    const n = this.node(name);
    if (this.realSidecars !== undefined) this.realSidecars.driverKilled(name);
    else if (!n.sidecarsDown && n.driver.running) {
      for (const c of [n.provisioner, n.capacity, n.snapshotter]) if (c !== undefined) this.runtime.unregister(c);
      n.sidecarsDown = true;
    }
    await n.driver.kill();
    this.driverContainerState(n, false);
  }

  /** The driver container's state in its DaemonSet Pod, where the run has one (driverPods, real sidecars). */
  private driverContainerState(n: SimNode, running: boolean): void {
    const meta = driverPod(n.name, DAEMONSET_UID).metadata;
    if (meta?.name === undefined || meta.namespace === undefined) return;
    n.kubelet.containerState({ name: meta.name, namespace: meta.namespace }, 'lode', running);
  }

  /** A node's re-enacted sidecars back after its driver: new processes, in their old place in the runtime's order. */
  private async restartSidecars(n: SimNode): Promise<void> {
    if (!n.sidecarsDown) return;
    n.sidecarsDown = false;
    for (const c of [n.provisioner, n.capacity, n.snapshotter]) if (c !== undefined) this.runtime.register(c, n.kubelet);
    if (n.provisioner !== undefined) {
      this.requests.relist(provisionerClient(n.name), INFORMERS.provisionerNode);
      // The capacity owner lookup of a starting provisioner (--capacity-ownerref-level=1).
      this.requests.record(provisionerClient(n.name), 'get', 'pods');
      await n.provisioner.restarted();
    }
    n.capacity?.start();
    if (n.snapshotter !== undefined) {
      this.requests.relist(snapshotterClient(n.name), INFORMERS.csiSnapshotter);
      n.snapshotter.restarted();
    }
  }

  /** Starts a node's driver again with the same flags and pools; kubelet then re-reads every file it wrote. */
  async restartDriver(name: string): Promise<{ ok: number; lost: string[] }> {
    if (this.lostNodes.has(name)) throw new Error(`restartDriver: node "${name}" was ${this.lostNodes.get(name)}; its driver does not come back`);
    const n = this.node(name);
    await n.driver.start();
    this.driverContainerState(n, true);
    this.realSidecars?.driverBack(name);
    await this.restartSidecars(n);
    n.capacity?.refresh();
    this.centralCapacity?.refresh();
    const result = await n.kubelet.verifyData();
    if (result.lost.length > 0) {
      for (const l of result.lost) this.events.record(`kubelet/${name}`, { kind: 'Node', metadata: { name } }, 'Warning', 'VolumeDataLost', `data written to ${l} is gone after the driver restart`);
    } else {
      this.events.record(`kubelet/${name}`, { kind: 'Node', metadata: { name } }, 'Normal', 'VolumeDataVerified', `driver restarted; ${result.ok} mounted volume(s) read back intact`);
    }
    return result;
  }

  /**
   * Undoes everything the run created: unpublish and unstage every volume, delete every
   * volume on every driver, stop the drivers, sweep leftover mounts and loop devices, and
   * remove the work dir. Collects problems instead of stopping at the first.
   */
  /** The door for writes from API clients (applied between reconciles). */
  get external(): ExternalWrites {
    return this.runtime.external;
  }

  async teardown(keepWorkDir = false): Promise<string[]> {
    if (this.tornDown) return [];
    this.tornDown = true;
    // Client writes from here on would land in a cluster that is being taken apart.
    this.runtime.external.close('the bench run is over');
    const problems: string[] = [];
    // Real sidecars first: none may act on a cluster being taken apart (SIGTERM, then SIGKILL; all reaped).
    if (this.realSidecars !== undefined) await this.realSidecars.stopAll();
    await Promise.all(this.driverKills);
    // Drivers started ahead for Nodes an earlier failure kept from being added, and drivers whose
    // start failed: no volumes yet, just stop them and end their mount namespaces.
    for (const d of await this.driverStarts.leftovers()) {
      await d.stop();
      await d.releaseMedia().catch((err: unknown) => problems.push(`${d.nodeName}: releasing its disks: ${(err as Error).message}`));
      problems.push(...await this.closeNamespaceOf(d));
      d.closeLog();
    }
    const pvs = this.store.list('PersistentVolume');
    for (const n of this.nodes.values()) {
      if (n.provisioner) this.runtime.unregister(n.provisioner);
      if (n.capacity) this.runtime.unregister(n.capacity);
      if (n.snapshotter) this.runtime.unregister(n.snapshotter);
      this.runtime.unregister(n.kubelet);
    }
    // Nodes are independent and nothing here writes to the store or the event log, so a few
    // are torn down at once (serially, 1,000 volumes took two minutes); problems stay in node order.
    const perNode = await boundedMap([...this.nodes.values()], DRIVER_START_CONCURRENCY, (n) => this.tearDownNode(n, pvs));
    for (const p of perNode) problems.push(...p);
    problems.push(...await this.closeTemplate());
    // After the drivers stop: a driver's last API request must not meet a closed port.
    if (this.driverApi !== undefined) {
      await this.driverApi.server.close();
      this.driverApi = undefined;
    }
    try {
      const swept = await sweep(this.opts.workDir);
      for (const s of swept) problems.push(`left behind by a driver, cleaned by the bench: ${s}`);
    } catch (err) {
      problems.push(`sweep: ${(err as Error).message}`);
    }
    if (!keepWorkDir) {
      try {
        rmSync(this.opts.workDir, { recursive: true, force: true });
      } catch (err) {
        problems.push(`rm ${this.opts.workDir}: ${(err as Error).message}`);
      }
    }
    return problems;
  }

  /** Unmounts, deletes every volume and snapshot of one node, stops its driver and releases its disks. */
  private async tearDownNode(n: SimNode, pvs: V1PersistentVolume[]): Promise<string[]> {
    const problems: string[] = [];
    if (!n.driver.running) {
      try {
        await n.driver.start();
      } catch (err) {
        problems.push(`${n.name}: restart for cleanup failed: ${(err as Error).message}`);
        return problems;
      }
    }
    problems.push(...await n.kubelet.unmountAll());
    // Snapshots first: a volume's snapshots live beside it, and some backends keep a source while snapshots of it remain.
    problems.push(...await this.deleteSnapshotsOn(n));
    const handles = new Set<string>();
    for (const pv of pvs) {
      const handle = pv.spec?.csi?.volumeHandle;
      if (handle === undefined || pv.spec?.csi?.driver !== this.driverName) continue;
      const affinity = JSON.stringify(pv.spec?.nodeAffinity ?? {});
      if (affinity.includes(`"${n.name}"`) || this.staticVolumes.get(pv.metadata?.name ?? '') === n.name) handles.add(handle);
    }
    try {
      const listed = await n.driver.client.listVolumes({});
      for (const e of listed.entries ?? []) if (e.volume?.volume_id) handles.add(e.volume.volume_id);
    } catch { /* ListVolumes is optional in CSI */ }
    for (const h of handles) {
      try {
        await n.driver.client.deleteVolume({ volume_id: h }, { timeoutMs: 60_000 });
        this.log(`deleted volume ${h} on ${n.name}`);
      } catch (err) {
        problems.push(`${n.name}: DeleteVolume ${h}: ${rpcErrorText(err)}`);
      }
    }
    await n.driver.stop();
    await n.driver.releaseMedia().catch((err: unknown) => problems.push(`${n.name}: releasing its disks: ${(err as Error).message}`));
    problems.push(...await this.closeNamespaceOf(n.driver));
    n.driver.closeLog();
    return problems;
  }

  /** Ends a node's mount namespace; a mount its driver left there is a problem, as one left on the host is (sweep). */
  private async closeNamespaceOf(d: NodeDriver): Promise<string[]> {
    try {
      return (await d.closeNamespace()).map((s) => `left behind by a driver, cleaned by the bench: ${d.nodeName}: ${s}`);
    } catch (err) {
      return [`${d.nodeName}: ending its mount namespace: ${(err as Error).message}`];
    }
  }

  /** DeleteSnapshot of every snapshot the node's contents name and every one its driver lists. */
  private async deleteSnapshotsOn(n: SimNode): Promise<string[]> {
    const problems: string[] = [];
    const ids = new Set<string>();
    for (const c of this.store.list('VolumeSnapshotContent')) {
      if (c.spec?.driver !== this.driverName) continue;
      const id = c.status?.snapshotHandle ?? c.spec?.source?.snapshotHandle;
      if (id !== undefined && c.metadata?.labels?.[LABEL_SNAPSHOT_MANAGED_BY] === n.name) ids.add(id);
    }
    if (n.snapshotter !== undefined) {
      let token = '';
      try {
        do {
          const r = await n.driver.client.listSnapshots({ starting_token: token, max_entries: 100 });
          for (const e of r.entries ?? []) if (e.snapshot?.snapshot_id) ids.add(e.snapshot.snapshot_id);
          token = r.next_token ?? '';
        } while (token !== '');
      } catch { /* ListSnapshots is optional in CSI */ }
    }
    for (const id of ids) {
      try {
        await n.driver.client.deleteSnapshot({ snapshot_id: id }, { timeoutMs: 60_000 });
        this.log(`deleted snapshot ${id} on ${n.name}`);
      } catch (err) {
        problems.push(`${n.name}: DeleteSnapshot ${id}: ${rpcErrorText(err)}`);
      }
    }
    return problems;
  }

  /** Stops drivers at once (second Ctrl-C): SIGKILL, then sweep. */
  async emergencyStop(): Promise<void> {
    await this.realSidecars?.stopAll(true).catch(() => undefined);
    for (const n of this.nodes.values()) await n.driver.kill().catch(() => undefined);
    // With the drivers gone, a node's namespace ends with its holder, and its mounts with it.
    for (const n of this.nodes.values()) await n.driver.killNamespace().catch(() => undefined);
    await this.closeTemplate();
    await sweep(this.opts.workDir).catch(() => undefined);
  }
}
