// The driver's HTTP endpoint: GET /metrics for Prometheus and GET /healthz for kubelet probes.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { DriverMetrics } from './driver-metrics.js';
import { parseListenAddress } from './listen-address.js';

/** What the driver says about its own health; `message` explains a `ready: false`. */
export interface HealthReport {
  ready: boolean;
  message?: string;
  /** Shown under a ready "ok", one per line: what needs an operator without stopping the driver. */
  warnings?: string[];
}

/** A running endpoint. */
export interface HttpEndpoint {
  /** The port actually bound (useful with port 0). */
  port: number;
  close(): Promise<void>;
}

/** Tuning that callers rarely need. */
export interface HttpEndpointOptions {
  /** Milliseconds after which a health check that has not answered counts as failed (default 2000). */
  healthTimeoutMs?: number;
}

// A hung health check must still answer, as a failure, before the probe command (3 s) gives up on us.
const DEFAULT_HEALTH_TIMEOUT_MS = 2_000;

/**
 * Listens on `address` ("127.0.0.1:9809", ":9809" for every interface, "[::1]:0" for any free
 * port) and serves the two paths. Rejects with a message naming the address when it is malformed,
 * already in use or cannot be bound.
 *
 * @example
 * const endpoint = await startHttpEndpoint('127.0.0.1:9809', metrics, async () => ({ ready: true }));
 * // ... later
 * await endpoint.close();
 */
export async function startHttpEndpoint(
  address: string,
  metrics: DriverMetrics,
  health: () => Promise<HealthReport>,
  opts: HttpEndpointOptions = {},
): Promise<HttpEndpoint> {
  const { host, port } = parseListenAddress(address);
  const healthTimeoutMs = opts.healthTimeoutMs ?? DEFAULT_HEALTH_TIMEOUT_MS;
  const server = createServer((req, res) => {
    handle(req, res, metrics, () => healthWithTimeout(health, healthTimeoutMs)).catch((err: unknown) => {
      // handle() answers every error itself; this only guards against a throw after headers went out.
      res.destroy(err instanceof Error ? err : new Error(String(err)));
    });
  });
  await listen(server, address, host, port);
  const bound = server.address();
  if (bound === null || typeof bound === 'string') {
    server.close();
    throw new Error(`metrics address ${address}: the server did not report a TCP port`);
  }
  return {
    port: bound.port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        // Prometheus keeps connections alive; without this close() would wait for them to idle out.
        server.closeAllConnections();
      }),
  };
}

function listen(server: Server, address: string, host: string | undefined, port: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException): void => {
      server.removeListener('listening', onListening);
      reject(new Error(`metrics address ${address}: ${explainListenError(err, port)}`, { cause: err }));
    };
    const onListening = (): void => {
      server.removeListener('error', onError);
      resolve();
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen({ host, port });
  });
}

function explainListenError(err: NodeJS.ErrnoException, port: number): string {
  switch (err.code) {
    case 'EADDRINUSE':
      return `port ${port} is already in use (another driver, or another program, listens there)`;
    case 'EADDRNOTAVAIL':
      return 'this host has no such address';
    case 'EACCES':
      return `not allowed to listen on port ${port}`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'the host name does not resolve';
    default:
      return err.message;
  }
}

async function handle(
  req: IncomingMessage,
  res: ServerResponse,
  metrics: DriverMetrics,
  health: () => Promise<HealthReport>,
): Promise<void> {
  const path = new URL(req.url ?? '/', 'http://localhost').pathname;
  if (path !== '/metrics' && path !== '/healthz') {
    return reply(res, 404, 'not found: try /metrics or /healthz\n');
  }
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('Allow', 'GET, HEAD');
    return reply(res, 405, 'method not allowed\n');
  }
  if (path === '/metrics') {
    let body: string;
    try {
      body = await metrics.metrics();
    } catch (err) {
      return reply(res, 500, `collecting metrics failed: ${errorMessage(err)}\n`);
    }
    return reply(res, 200, body, metrics.contentType, req.method === 'HEAD');
  }
  const report = await health();
  if (report.ready) {
    const body = ['ok', ...(report.warnings ?? []).map((w) => `warning: ${w}`)].join('\n') + '\n';
    return reply(res, 200, body, undefined, req.method === 'HEAD');
  }
  return reply(res, 503, `${report.message ?? 'not ready'}\n`, undefined, req.method === 'HEAD');
}

async function healthWithTimeout(health: () => Promise<HealthReport>, timeoutMs: number): Promise<HealthReport> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<HealthReport>((resolve) => {
    timer = setTimeout(
      () => resolve({ ready: false, message: `health check did not answer within ${timeoutMs} ms` }),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([
      health().catch((err: unknown): HealthReport => ({ ready: false, message: `health check failed: ${errorMessage(err)}` })),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

function reply(
  res: ServerResponse,
  status: number,
  body: string,
  contentType = 'text/plain; charset=utf-8',
  headOnly = false,
): void {
  res.statusCode = status;
  res.setHeader('Content-Type', contentType);
  res.setHeader('Content-Length', Buffer.byteLength(body));
  // Health and metrics are live figures; a proxy serving a cached "ok" would hide an outage.
  res.setHeader('Cache-Control', 'no-store');
  res.end(headOnly ? undefined : body);
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
