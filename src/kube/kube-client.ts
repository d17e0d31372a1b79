// The driver's one door to the Kubernetes API: client-node loaded only when configured, every request bounded in time and named by its caller.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { CoordinationV1Api, CoreV1Api, KubeConfig, StorageV1Api } from '@kubernetes/client-node';
import { log } from '../util/log.js';
import { describeApiError, KubeUnavailableError } from './kube-errors.js';
import type { KubeOptions } from './kube-options.js';

/** The APIs the driver's features use; each feature documents the RBAC it needs (docs/api-access.md). */
export interface KubeApis {
  core: CoreV1Api;
  storage: StorageV1Api;
  coordination: CoordinationV1Api;
}

/**
 * The abort signal of the bounded() call a request is made in: the client's middleware hands it
 * to the HTTP request, so a request past its bound is cancelled and its connection closed, not
 * left open to an API server that never answers (which also kept a stopping driver alive).
 */
export const requestSignal = new AsyncLocalStorage<AbortSignal>();

export class KubeClient {
  constructor(readonly apis: KubeApis, readonly options: KubeOptions, readonly server: string, readonly userAgent: string) {}

  /**
   * Runs one API request, waiting at most `timeoutMs` (default: the CSI call bound). On timeout
   * the request is cancelled (requestSignal) and the call rejects at once, whatever the HTTP
   * library does with the cancellation.
   */
  async bounded<T>(what: string, call: (apis: KubeApis) => Promise<T>, timeoutMs = this.options.callTimeoutMs): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const abort = new AbortController();
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        reject(new KubeUnavailableError(`no answer from the API server at ${this.server} within ${timeoutMs} ms (${what})`));
        abort.abort();
      }, timeoutMs);
      timer.unref();
    });
    const request = requestSignal.run(abort.signal, () => call(this.apis));
    // The cancelled request's own rejection comes after the bound's, to a promise nobody awaits.
    request.catch(() => undefined);
    try {
      return await Promise.race([request, late]);
    } finally {
      clearTimeout(timer);
    }
  }
}

/**
 * Loads the credentials and checks them with a GET of this node's Node object, which every
 * API feature needs. Rejected credentials or a missing permission stop the driver with a
 * message saying which; an API server that does not answer is only logged, since CSI calls
 * must go on through an outage.
 */
export async function connectKube(options: KubeOptions, nodeId: string, version: string): Promise<KubeClient> {
  const k8s = await import('@kubernetes/client-node');
  const kc: KubeConfig = new k8s.KubeConfig();
  try {
    if (options.source.kind === 'in-cluster') kc.loadFromCluster();
    else kc.loadFromFile(options.source.path);
  } catch (err) {
    const from = options.source.kind === 'in-cluster' ? 'the in-cluster service account' : `kubeconfig ${options.source.path}`;
    throw new Error(`cannot load API credentials from ${from}: ${(err as Error).message}`);
  }
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error(`no current cluster in ${options.source.kind === 'kubeconfig' ? options.source.path : 'the in-cluster configuration'}`);
  const userAgent = `lode-driver/${version} (${nodeId})`;
  // As KubeConfig.makeApiClient builds a client, with the driver's own User-Agent, so API audit
  // logs (and the bench's request counts) tell its requests apart.
  const configuration = k8s.createConfiguration({
    baseServer: new k8s.ServerConfiguration(cluster.server, {}),
    authMethods: { default: kc },
    promiseMiddleware: [{
      pre: async (request) => {
        request.setHeaderParam('User-Agent', userAgent);
        const signal = requestSignal.getStore();
        if (signal !== undefined) request.setSignal(signal);
        return request;
      },
      post: async (response) => response,
    }],
  });
  const client = new KubeClient({
    core: new k8s.CoreV1Api(configuration),
    storage: new k8s.StorageV1Api(configuration),
    coordination: new k8s.CoordinationV1Api(configuration),
  }, options, cluster.server, userAgent);
  try {
    await client.bounded(`get node ${nodeId}`, (a) => a.core.readNode({ name: nodeId }), Math.max(options.callTimeoutMs, 5_000));
  } catch (err) {
    const status = (err as { code?: unknown }).code;
    if (status === 401 || status === 403) throw new Error(describeApiError(err, `get node ${nodeId}`));
    log('warn', 'the API server is not answering yet; API features wait for it, CSI calls do not', { server: cluster.server, error: describeApiError(err, `get node ${nodeId}`) });
  }
  log('info', 'API access', { server: cluster.server, source: options.source.kind, userAgent });
  return client;
}
