// The pods/proxy subresource (GET /api/v1/namespaces/NS/pods/NAME[:PORT]/proxy/PATH): forwarded to the bench process that stands for the pod's port, a driver's metrics endpoint.
//
// A fake at a process boundary we do not own: kube-apiserver's proxy dials the pod's IP on the
// port; bench pods have no IPs (no network), so the bench dials the loopback port of the real
// driver process behind the pod instead. What crosses it is real: the driver's own HTTP answer,
// status, content type and body, passed back unchanged.
import { request, type IncomingMessage, type ServerResponse } from 'node:http';
import { StatusError } from './status.js';

export interface PodProxyPath {
  namespace: string;
  pod: string;
  /** As written after the pod's name ("9809"), or '' when none was. */
  port: string;
  /** The path on the pod, with its leading slash ("/metrics"; "/" for none). */
  path: string;
}

const PROXY = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/proxy(\/.*)?$/;

/** The pod proxy's parts of a URL path, or undefined for any other path. */
export function parsePodProxyPath(pathname: string): PodProxyPath | undefined {
  const m = PROXY.exec(pathname);
  if (m === null) return undefined;
  let namespace: string;
  let nameAndPort: string;
  try {
    namespace = decodeURIComponent(m[1]!);
    nameAndPort = decodeURIComponent(m[2]!);
  } catch {
    return undefined;
  }
  // NAME:PORT, or scheme:NAME:PORT as upstream also takes; only plain http is served here.
  const parts = nameAndPort.split(':');
  const [pod, port] = parts.length === 3 ? [parts[1]!, parts[2]!] : [parts[0]!, parts[1] ?? ''];
  return { namespace, pod, port, path: m[3] ?? '/' };
}

/** Upstream's proxy gives up dialing after 30 s; so does this one, for a process that accepts but never answers. */
const TIMEOUT_MS = 30_000;

/** Forwards a GET or HEAD to 127.0.0.1:`port` and copies the answer back; a failure is a 503, as upstream's "error trying to reach service". */
export function forward(req: IncomingMessage, res: ServerResponse, port: number, path: string, query: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const out = request({ host: '127.0.0.1', port, method: req.method, path: `${path}${query}`, headers: { accept: req.headers.accept ?? '*/*' }, timeout: TIMEOUT_MS }, (answer) => {
      const headers: Record<string, string> = {};
      for (const h of ['content-type', 'content-length', 'cache-control']) {
        const v = answer.headers[h];
        if (typeof v === 'string') headers[h] = v;
      }
      res.writeHead(answer.statusCode ?? 502, headers);
      answer.pipe(res);
      answer.once('end', () => resolve());
      answer.once('error', (err) => reject(err));
    });
    out.once('timeout', () => out.destroy(new Error(`no answer within ${TIMEOUT_MS / 1000}s`)));
    out.once('error', (err) => reject(new StatusError(503, 'ServiceUnavailable', `error trying to reach service: ${err.message}`)));
    out.end();
  });
}
