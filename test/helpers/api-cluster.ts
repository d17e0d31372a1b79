// Test support: the bench's real API server over a real object store, held open for drivers and clients to talk to.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as http from 'node:http';
import * as net from 'node:net';
import * as path from 'node:path';
import { ObjectStore } from '../../src/bench/api/object-store.js';
import { EventLog } from '../../src/bench/api/event-log.js';
import { VirtualClock } from '../../src/bench/clock/virtual-clock.js';
import { Runtime } from '../../src/bench/runtime/runtime.js';
import { ApiServer } from '../../src/bench/apiserver/server.js';
import { writeKubeconfig } from '../../src/bench/apiserver/kubeconfig.js';
import { RequestCounts } from '../../src/bench/api/request-counts.js';
export { until, untilAsync } from './until.js';

export interface ApiClusterOptions {
  driverName?: string;
  /** Watch history the server keeps (a test that lists thousands of objects needs more). */
  historyLimit?: number;
  /** Prefix of the scratch directory that holds the kubeconfig. */
  dirPrefix?: string;
}

export class ApiCluster {
  readonly clock = new VirtualClock();
  readonly store = new ObjectStore(this.clock);
  readonly events = new EventLog(() => this.clock.now());
  private readonly runtime = new Runtime(this.clock);
  private readonly hold = new AbortController();
  /** Every request served, as "client verb resource" (client: the User-Agent's first word). */
  readonly requests: string[] = [];
  private readonly server: ApiServer;
  private held: Promise<void> | undefined;
  readonly dir: string;
  /** A kubeconfig for the server, once started. */
  kubeconfig = '';
  /** The server's base URL, once started. */
  url = '';

  /** Objects may go into `store` before start(); the server listens only then. */
  constructor(private readonly opts: ApiClusterOptions = {}) {
    this.server = new ApiServer({ host: '127.0.0.1', port: 0, historyLimit: opts.historyLimit ?? 200, onRequest: (client, verb, resource) => this.requests.push(`${client} ${verb} ${resource}`) });
    this.dir = mkdtempSync(path.join(tmpdir(), opts.dirPrefix ?? 'lode-api-'));
  }

  static async start(driverName = 'lode.csi.dev'): Promise<ApiCluster> {
    const c = new ApiCluster({ driverName });
    await c.start();
    return c;
  }

  async start(): Promise<void> {
    this.url = await this.server.start();
    this.server.attach({ store: this.store, events: this.events, clock: this.clock, external: this.runtime.external, driverName: this.opts.driverName ?? 'lode.csi.dev', requests: new RequestCounts() });
    this.held = this.runtime.hold(this.hold.signal);
    this.kubeconfig = path.join(this.dir, 'kubeconfig');
    writeKubeconfig(this.kubeconfig, this.url);
  }

  async stop(): Promise<void> {
    this.hold.abort();
    await this.held;
    await this.server.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A fake API server (a process boundary we do not own): an HTTP server answering every request with `status`, or never answering when status is 0. */
export async function stubApiServer(status: number): Promise<{ url: string; open(): number; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const s = http.createServer((_, res) => {
    if (status === 0) return;
    res.writeHead(status, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code: status, message: 'stub' }));
  });
  s.on('connection', (c) => { sockets.add(c); c.on('close', () => sockets.delete(c)); });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  return { url: `http://127.0.0.1:${port}`, open: () => sockets.size, close: () => new Promise((r) => { for (const c of sockets) c.destroy(); s.close(() => r()); }) };
}
