// The driver's one door to the Kubernetes API: opened only when configured, every request bounded in time and named by its caller.
import { log } from '../util/log.js';
import { HttpTransport, requestSignal } from './http-transport.js';
import { inClusterCredentials, kubeconfigCredentials, type KubeCredentials } from './kube-config.js';
import { describeApiError, KubeUnavailableError } from './kube-errors.js';
import type { KubeOptions } from './kube-options.js';
import { thinApis, type KubeApis } from './thin-apis.js';

export type { KubeApis } from './thin-apis.js';
export { requestSignal } from './http-transport.js';

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

  /**
   * Runs one long request (a watch) until it ends or `signal` aborts, which cancels it: no
   * bound in time, since a watch is meant to stay open; the server ends it at its timeoutSeconds.
   */
  streaming<T>(call: (apis: KubeApis) => Promise<T>, signal: AbortSignal): Promise<T> {
    return requestSignal.run(signal, () => call(this.apis));
  }
}

/**
 * Loads the credentials and checks them with a GET of this node's Node object, which every
 * API feature needs. Rejected credentials or a missing permission stop the driver with a
 * message saying which; an API server that does not answer is only logged, since CSI calls
 * must go on through an outage.
 */
export async function connectKube(options: KubeOptions, nodeId: string, version: string): Promise<KubeClient> {
  let creds: KubeCredentials;
  try {
    creds = options.source.kind === 'in-cluster' ? inClusterCredentials() : kubeconfigCredentials(options.source.path);
  } catch (err) {
    const from = options.source.kind === 'in-cluster' ? 'the in-cluster service account' : `kubeconfig ${options.source.path}`;
    throw new Error(`cannot load API credentials from ${from}: ${(err as Error).message}`);
  }
  // The driver's own User-Agent, so API audit logs (and the bench's request counts) tell its requests apart.
  const userAgent = `lode-driver/${version} (${nodeId})`;
  const client = new KubeClient(thinApis(new HttpTransport(creds, { userAgent })), options, creds.server, userAgent);
  try {
    await client.bounded(`get node ${nodeId}`, (a) => a.core.readNode({ name: nodeId }), Math.max(options.callTimeoutMs, 5_000));
  } catch (err) {
    const status = (err as { code?: unknown }).code;
    if (status === 401 || status === 403) throw new Error(describeApiError(err, `get node ${nodeId}`));
    log('warn', 'the API server is not answering yet; API features wait for it, CSI calls do not', { server: creds.server, error: describeApiError(err, `get node ${nodeId}`) });
  }
  log('info', 'API access', { server: creds.server, source: options.source.kind, userAgent });
  return client;
}
