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

export class ApiCluster {
  readonly clock = new VirtualClock();
  readonly store = new ObjectStore(this.clock);
  private readonly runtime = new Runtime(this.clock);
  private readonly hold = new AbortController();
  /** Every request served, as "client verb resource". */
  readonly requests: string[] = [];
  private readonly server = new ApiServer({ host: '127.0.0.1', port: 0, historyLimit: 200, onRequest: (client, verb, resource) => this.requests.push(`${client} ${verb} ${resource}`) });
  private held: Promise<void> | undefined;
  readonly dir = mkdtempSync(path.join(tmpdir(), 'lode-nodeloss-'));
  kubeconfig = '';

  static async start(driverName = 'lode.csi.dev'): Promise<ApiCluster> {
    const c = new ApiCluster();
    const base = await c.server.start();
    c.server.attach({ store: c.store, events: new EventLog(() => c.clock.now()), clock: c.clock, external: c.runtime.external, driverName, requests: new RequestCounts() });
    c.held = c.runtime.hold(c.hold.signal);
    c.kubeconfig = path.join(c.dir, 'kubeconfig');
    writeKubeconfig(c.kubeconfig, base);
    return c;
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
