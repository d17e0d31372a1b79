// Test support: the bench's real API server over a real object store, held open for drivers and clients to talk to.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { ObjectStore } from '../../src/bench/api/object-store.js';
import { EventLog } from '../../src/bench/api/event-log.js';
import { VirtualClock } from '../../src/bench/clock/virtual-clock.js';
import { Runtime } from '../../src/bench/runtime/runtime.js';
import { ApiServer } from '../../src/bench/apiserver/server.js';
import { writeKubeconfig } from '../../src/bench/apiserver/kubeconfig.js';
import { RequestCounts } from '../../src/bench/api/request-counts.js';

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

/** Polls `check` until it holds; a bound against a hang, not a speed check. */
export async function until(what: string, check: () => boolean, boundMs = 30_000): Promise<void> {
  const deadline = Date.now() + boundMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
