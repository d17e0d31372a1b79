// The plugin's door to the cluster: the user's kubeconfig (as kubectl reads it, with --kubeconfig and --context), and the few lists each subcommand needs.
import type { CoordinationV1Api, RequestContext, ResponseContext, CoreV1Api, CoreV1Event, CustomObjectsApi, KubeConfig, StorageV1Api, V1CSINode, V1CSIStorageCapacity, V1Lease, V1Node, V1PersistentVolume, V1PersistentVolumeClaim, V1Pod, V1StorageClass } from '@kubernetes/client-node';
import { apiStatus } from '../kube/kube-errors.js';
import { CLUSTER_EVENT_NAMESPACE } from '../kube/event-body.js';
import { packageVersion } from '../util/version.js';

export interface ConnectOptions {
  kubeconfig?: string;
  context?: string;
}

/** A VolumeSnapshotContent, as far as the plugin reads it (the CRD's objects come untyped). */
export interface SnapshotContent {
  metadata?: { name?: string };
  spec?: { driver?: string; source?: { volumeHandle?: string; snapshotHandle?: string } };
}

/** A failed read, said as kubectl says it: what was asked and what the server answered. */
export class ClusterError extends Error {
  override name = 'ClusterError';
  constructor(message: string, readonly status?: number) {
    super(message);
  }
}

function describe(err: unknown, what: string): ClusterError {
  const status = apiStatus(err);
  const body = (err as { body?: unknown }).body;
  let message = err instanceof Error ? err.message.split('\n')[0] ?? '' : String(err);
  if (typeof body === 'string') {
    try {
      const parsed = JSON.parse(body) as { message?: unknown };
      if (typeof parsed.message === 'string') message = parsed.message;
    } catch { /* not a Status object: keep the client's own message */ }
  }
  if (status === 401) return new ClusterError(`${what}: the server has asked for the client to provide credentials (401 Unauthorized)`, status);
  if (status === 403) return new ClusterError(`${what}: forbidden (403): ${message}`, status);
  if (status !== undefined) return new ClusterError(`${what}: the server answered ${status}: ${message}`, status);
  const cause = (err as { cause?: { message?: unknown } }).cause;
  return new ClusterError(`${what}: the server could not be reached: ${typeof cause?.message === 'string' ? cause.message : message}`);
}

/** How long one driver's /metrics may take through the pod proxy before its figures count as unknown. */
const PROXY_TIMEOUT_MS = 15_000;

export class PluginCluster {
  private constructor(
    private readonly core: CoreV1Api,
    private readonly storage: StorageV1Api,
    private readonly coordination: CoordinationV1Api,
    private readonly custom: CustomObjectsApi,
    /** The same API for pods/proxy only, each request bounded by PROXY_TIMEOUT_MS. */
    private readonly proxyCore: CoreV1Api,
    /** The context's namespace, or "default": where a claim or pod named without -n is looked for. */
    readonly namespace: string,
  ) {}

  /**
   * Loads the kubeconfig as kubectl does: --kubeconfig, else $KUBECONFIG (a list of files),
   * else ~/.kube/config, else the in-cluster service account; --context picks a context.
   */
  static async connect(options: ConnectOptions): Promise<PluginCluster> {
    const k8s = await import('@kubernetes/client-node');
    const kc: KubeConfig = new k8s.KubeConfig();
    try {
      if (options.kubeconfig !== undefined) kc.loadFromFile(options.kubeconfig);
      else kc.loadFromDefault();
    } catch (err) {
      throw new ClusterError(`cannot load the kubeconfig${options.kubeconfig !== undefined ? ` ${options.kubeconfig}` : ''}: ${(err as Error).message}`);
    }
    if (options.context !== undefined) {
      if (kc.getContextObject(options.context) === null) throw new ClusterError(`context was not found for specified context: ${options.context}`);
      kc.setCurrentContext(options.context);
    }
    const cluster = kc.getCurrentCluster();
    if (cluster === null) throw new ClusterError('no cluster in the kubeconfig\'s current context: give --kubeconfig or --context, or set KUBECONFIG');
    const userAgent = `kubectl-lode/${packageVersion()}`;
    // As KubeConfig.makeApiClient builds one, with the plugin's own User-Agent so audit logs tell its requests apart.
    const agent = { pre: async (request: RequestContext) => { request.setHeaderParam('User-Agent', userAgent); return request; }, post: async (response: ResponseContext) => response };
    const configuration = k8s.createConfiguration({ baseServer: new k8s.ServerConfiguration(cluster.server, {}), authMethods: { default: kc }, promiseMiddleware: [agent] });
    // kube-apiserver bounds no proxied request (to it, proxy is long-running): a pod that accepts and never answers would hold the command.
    const bounded = { pre: async (request: RequestContext) => { request.setSignal(AbortSignal.timeout(PROXY_TIMEOUT_MS)); return request; }, post: async (response: ResponseContext) => response };
    const proxyConfiguration = k8s.createConfiguration({ baseServer: new k8s.ServerConfiguration(cluster.server, {}), authMethods: { default: kc }, promiseMiddleware: [agent, bounded] });
    const namespace = kc.getContextObject(kc.getCurrentContext())?.namespace ?? 'default';
    return new PluginCluster(new k8s.CoreV1Api(configuration), new k8s.StorageV1Api(configuration), new k8s.CoordinationV1Api(configuration), new k8s.CustomObjectsApi(configuration), new k8s.CoreV1Api(proxyConfiguration), namespace);
  }

  private async read<T>(what: string, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (err) {
      throw describe(err, what);
    }
  }

  nodes(): Promise<V1Node[]> {
    return this.read('list nodes', async () => (await this.core.listNode({})).items);
  }

  csiNodes(): Promise<V1CSINode[]> {
    return this.read('list csinodes', async () => (await this.storage.listCSINode({})).items);
  }

  /** The driver's StorageClasses (by provisioner). */
  async classes(driverName: string): Promise<V1StorageClass[]> {
    const all = await this.read('list storageclasses', async () => (await this.storage.listStorageClass({})).items);
    return all.filter((c) => c.provisioner === driverName);
  }

  /** The capacity objects of the driver's classes, in every namespace (the provisioners' label selects them). */
  capacities(labelSelector: string): Promise<V1CSIStorageCapacity[]> {
    return this.read('list csistoragecapacities', async () => (await this.storage.listCSIStorageCapacityForAllNamespaces({ labelSelector })).items);
  }

  /** The PersistentVolumes of the driver. */
  async volumes(driverName: string): Promise<V1PersistentVolume[]> {
    const all = await this.read('list persistentvolumes', async () => (await this.core.listPersistentVolume({})).items);
    return all.filter((pv) => pv.spec?.csi?.driver === driverName);
  }

  pods(): Promise<V1Pod[]> {
    return this.read('list pods', async () => (await this.core.listPodForAllNamespaces({})).items);
  }

  /** The pods matching a label selector in one namespace (the driver's DaemonSet pods). */
  podsSelected(namespace: string, labelSelector: string): Promise<V1Pod[]> {
    return this.read(`list pods -n ${namespace}`, async () => (await this.core.listNamespacedPod({ namespace, labelSelector })).items);
  }

  /**
   * GET PATH of a pod's PORT through the API server's pod proxy (pods/proxy, as
   * `kubectl get --raw /api/v1/namespaces/NS/pods/NAME:PORT/proxy/PATH` does): the text it answers.
   */
  async podProxy(namespace: string, pod: string, port: number, path: string): Promise<string> {
    const what = `get pods/proxy ${namespace}/${pod}:${port}`;
    try {
      return await this.read(what, () => this.proxyCore.connectGetNamespacedPodProxyWithPath({ namespace, name: `${pod}:${port}`, path }));
    } catch (err) {
      if (err instanceof ClusterError && err.status === undefined && /\b(timeout|aborted)\b/i.test(err.message)) throw new ClusterError(`${what}: no answer within ${PROXY_TIMEOUT_MS / 1000}s`);
      throw err;
    }
  }

  podsIn(namespace: string): Promise<V1Pod[]> {
    return this.read(`list pods -n ${namespace}`, async () => (await this.core.listNamespacedPod({ namespace })).items);
  }

  /** One claim, or undefined when there is none of that name. */
  async claim(namespace: string, name: string): Promise<V1PersistentVolumeClaim | undefined> {
    return this.orNone(`get persistentvolumeclaim ${namespace}/${name}`, () => this.core.readNamespacedPersistentVolumeClaim({ namespace, name }));
  }

  async pod(namespace: string, name: string): Promise<V1Pod | undefined> {
    return this.orNone(`get pod ${namespace}/${name}`, () => this.core.readNamespacedPod({ namespace, name }));
  }

  async storageClass(name: string): Promise<V1StorageClass | undefined> {
    return this.orNone(`get storageclass ${name}`, () => this.storage.readStorageClass({ name }));
  }

  async lease(namespace: string, name: string): Promise<V1Lease | undefined> {
    return this.orNone(`get lease ${namespace}/${name}`, () => this.coordination.readNamespacedLease({ namespace, name }));
  }

  /** The Events on Nodes, where the drivers report orphans, limits and lost nodes (kubelet's recorders put them in "default" too). */
  nodeEvents(): Promise<CoreV1Event[]> {
    return this.read('list events', async () => (await this.core.listNamespacedEvent({ namespace: CLUSTER_EVENT_NAMESPACE, fieldSelector: 'involvedObject.kind=Node' })).items);
  }

  /** The Events about one object (why): the scheduler's and the provisioner's last words on it. */
  eventsAbout(namespace: string, kind: string, name: string): Promise<CoreV1Event[]> {
    return this.read('list events', async () => (await this.core.listNamespacedEvent({ namespace, fieldSelector: `involvedObject.kind=${kind},involvedObject.name=${name}` })).items);
  }

  /** The VolumeSnapshotContents, or undefined where the snapshot CRDs are not installed. */
  async snapshotContents(): Promise<SnapshotContent[] | undefined> {
    try {
      const list: unknown = await this.custom.listClusterCustomObject({ group: 'snapshot.storage.k8s.io', version: 'v1', plural: 'volumesnapshotcontents' });
      const items = (list as { items?: unknown }).items;
      return Array.isArray(items) ? items as SnapshotContent[] : [];
    } catch (err) {
      if (apiStatus(err) === 404) return undefined;
      throw describe(err, 'list volumesnapshotcontents');
    }
  }

  private async orNone<T>(what: string, call: () => Promise<T>): Promise<T | undefined> {
    try {
      return await call();
    } catch (err) {
      if (apiStatus(err) === 404) return undefined;
      throw describe(err, what);
    }
  }
}
