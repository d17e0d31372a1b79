// One simulated node's real `lode driver` process: its pools, socket and kubelet directory under the bench work dir.
import { spawn, type ChildProcess } from 'node:child_process';
import { connect, createServer } from 'node:net';
import { createWriteStream, existsSync, mkdirSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CsiClient, type CallGate } from '../../csi/client.js';
import { DRIVER_NODE_FLAGS } from '../../util/driver-node-flags.js';
import type { PoolSpec } from '../api/node-pools.js';
import { BtrfsMedium } from './btrfs-medium.js';
import { NodeNamespace } from './node-namespace.js';
import type { MountTemplate } from './mount-template.js';
import { poolSpecLine, writeProfileDir, type BenchPoolProfiles } from './pool-profiles.js';

/** `lode driver`'s exit status for flags it refuses (src/cli/driver-command.ts). */
const USAGE_EXIT_CODE = 2;

/** The `lode` entry point, relative to this compiled module (dist/src/bench/nodes). */
const MAIN_JS = fileURLToPath(new URL('../../cli/main.js', import.meta.url));

export interface NodeDriverOptions {
  nodeName: string;
  /** This node's directory under the bench work dir. */
  nodeDir: string;
  driverName: string;
  pools: PoolSpec[];
  /** Milliseconds to wait for the socket and a ready Probe. */
  startTimeoutMs?: number;
  /** False for a node without Lode pools: no process, kubelet finds no driver registered. */
  installed?: boolean;
  /** The run's kubeconfig when the scenario gives drivers API access (`driverApi`, the default). */
  kubeconfig?: string;
  /**
   * Settings the DaemonSet gives the driver as environment variables (its API features: e.g.
   * LODE_NODE_LOSS=off), set with the kubeconfig only; flags win over them in the driver.
   */
  env?: Readonly<Record<string, string>>;
  /** More driver flags, appended after the bench's own (a scenario's `driverFlags`). */
  extraArgs?: readonly string[];
  /**
   * The scenario's pool profiles, for a node whose pools come from its label: the driver gets
   * --pool-config (every profile, no entry of its own) instead of --pool, and picks by itself;
   * `pools` are then the ones its profile names, for the bench's own use (disks, reports).
   */
  profiles?: BenchPoolProfiles;
  /**
   * Serve /metrics and /healthz on a free loopback port (`--metrics-address`), where the
   * bench's pod proxy reaches them: for runs whose API shows the driver's DaemonSet pods.
   */
  metrics?: boolean;
  /**
   * The run's mount template, which the node's namespace is copied from at its driver's first
   * start (made once per run, by the first node that asks: see Cluster).
   */
  mountTemplate: () => Promise<MountTemplate>;
  /** When each CSI call is sent and its answer taken (the runtime's, to overlap nodes' calls); straight through without. */
  gate?: CallGate;
}

export class NodeDriver {
  readonly nodeName: string;
  readonly socketPath: string;
  readonly kubeletDir: string;
  readonly pools: PoolSpec[];
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private log: WriteStream | undefined;
  private csi: CsiClient | undefined;
  private recentOutput = '';
  /** The start of this start's output: a flag error's usage text pushes its first line out of `recentOutput`. */
  private firstOutput = '';
  /** The exit status of the last process that ended (null after a signal). */
  private lastExitCode: number | null = null;
  readonly installed: boolean;
  /** The disks of this node's dir pools, kept across driver restarts as a node's disks are. */
  private readonly media = new Map<string, BtrfsMedium>();
  /** The node's own mount namespace, made at its driver's first start and kept across restarts. */
  private ns: NodeNamespace | undefined;

  constructor(private readonly opts: NodeDriverOptions) {
    this.nodeName = opts.nodeName;
    this.socketPath = join(opts.nodeDir, 'csi.sock');
    this.kubeletDir = join(opts.nodeDir, 'kubelet');
    this.pools = opts.pools;
    this.installed = opts.installed ?? true;
  }

  poolDir(pool: string): string {
    return join(this.opts.nodeDir, 'pools', pool);
  }

  /**
   * Where the bench (kubelet's re-enactment) reads and writes `path` of this node, a path as
   * its driver sees it: inside the node's mount namespace, so a volume mounted there is seen.
   */
  view(path: string): string {
    return this.ns === undefined ? path : this.ns.view(path);
  }

  /** The process holding the node's mount namespace (undefined before the first start), whose /proc entry shows the node's mounts. */
  get mountNamespacePid(): number | undefined {
    return this.ns?.pid;
  }

  get running(): boolean {
    return this.child !== undefined;
  }

  /** The loopback port the running driver serves /metrics on (undefined while down, or without `metrics`). */
  get metricsPort(): number | undefined {
    return this.child === undefined ? undefined : this.port;
  }
  private port: number | undefined;

  /** The running process's id (undefined while down), so a caller can read what it was started with from /proc. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** The CSI client of the running process; throws UNAVAILABLE-like when the driver is down. */
  get client(): CsiClient {
    if (this.csi === undefined) {
      const err = new Error(`driver of node ${this.nodeName} is not running`) as Error & { code: number };
      err.code = 14; // UNAVAILABLE, what a sidecar sees when the socket is gone
      throw err;
    }
    return this.csi;
  }

  /**
   * Starts the driver and waits until it is ready. A process that dies while loading is
   * started again (twice at most): on a shared checkout another `npm run build` may be
   * rewriting dist/ at that moment, and the half-written module is gone a second later.
   * One that refused its flags (exit status 2, `lode driver`'s usage error) would refuse them
   * again, so it is not.
   */
  async start(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.startOnce();
        return;
      } catch (err) {
        if (attempt >= 3 || this.child !== undefined || this.lastExitCode === USAGE_EXIT_CODE) throw err;
        await new Promise((r) => setTimeout(r, 1_000));
      }
    }
  }

  private async startOnce(): Promise<void> {
    if (this.child !== undefined) return;
    this.recentOutput = '';
    this.firstOutput = '';
    this.lastExitCode = null;
    mkdirSync(this.kubeletDir, { recursive: true });
    this.ns ??= await NodeNamespace.open(await this.opts.mountTemplate());
    // The same V8 flags as the image's entrypoint, so the bench runs drivers as they ship.
    const args = [...DRIVER_NODE_FLAGS, MAIN_JS, 'driver', '--endpoint', `unix://${this.socketPath}`, '--node-id', this.nodeName, '--driver-name', this.opts.driverName];
    for (const p of this.pools) {
      mkdirSync(this.poolDir(p.name), { recursive: true });
      if (p.backend === 'dir') await this.medium(p).ensure();
      // The bench's nodes allow inline ephemeral volumes up to the pool's size, so scenarios
      // show what the scheduler does not see (a real pool allows them only with this option).
      if (this.opts.profiles === undefined) args.push('--pool', poolSpecLine(p, this.poolDir(p.name)));
    }
    if (this.opts.profiles !== undefined) {
      const dir = join(this.opts.nodeDir, 'pool-config');
      writeProfileDir(dir, this.opts.profiles, (pool) => this.poolDir(pool));
      args.push('--pool-config', dir, '--profile-label', this.opts.profiles.label);
    }
    args.push('--target-root', this.kubeletDir);
    if (this.opts.metrics === true) {
      // A port free now, chosen anew each start: should another process take it first, the
      // driver exits on the bind and start() tries again with another.
      this.port = await freeLoopbackPort();
      args.push('--metrics-address', `127.0.0.1:${this.port}`);
    }
    // Every start, the first and each after a kill (a driver restart, a lost node's cleanup at
    // teardown), has the same command line and environment: a scenario's driverFlags may need
    // the API (--node-loss on, --orphan-check), and a driver started without it would refuse them.
    // A lost node's driver started again at teardown cannot act on the cluster through it: the
    // run's API takes no more writes by then (Cluster.teardown).
    const kubeconfig = this.opts.kubeconfig;
    if (kubeconfig !== undefined) args.push('--kubeconfig', kubeconfig);
    args.push(...(this.opts.extraArgs ?? []));
    this.log ??= createWriteStream(join(this.opts.nodeDir, 'driver.log'), { flags: 'a' });
    // Own process group: a Ctrl-C at the terminal reaches the bench, which then tears down
    // through the still-running drivers, instead of killing them mid-teardown.
    const env = kubeconfig !== undefined && this.opts.env !== undefined ? { ...process.env, ...this.opts.env } : process.env;
    const [command, full] = this.ns.command(process.execPath, args);
    // Through setpriv, as the namespace holders: a bench that is killed outright (SIGKILL, a
    // crash) takes its drivers with it (SIGTERM, a clean stop) instead of leaving them running.
    // nsenter and the driver keep the parent-death signal: each execs the next, same process.
    const child = spawn('setpriv', ['--pdeathsig', 'TERM', '--', command, ...full], { stdio: ['ignore', 'pipe', 'pipe'], detached: true, env });
    child.stdout?.pipe(this.log, { end: false });
    child.stderr?.pipe(this.log, { end: false });
    const keep = (chunk: Buffer): void => {
      const text = chunk.toString('utf8');
      if (this.firstOutput.length < 2000) this.firstOutput = (this.firstOutput + text).slice(0, 2000);
      this.recentOutput = (this.recentOutput + text).slice(-4000);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    this.child = child;
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    child.once('exit', (code) => {
      this.lastExitCode = code;
      if (this.child === child) {
        this.child = undefined;
        this.csi?.close();
        this.csi = undefined;
      }
    });
    await this.waitReady();
  }

  private async waitReady(): Promise<void> {
    const deadline = Date.now() + (this.opts.startTimeoutMs ?? 30_000);
    let lastErr: unknown;
    while (Date.now() < deadline) {
      if (this.child === undefined) throw new Error(`driver of node ${this.nodeName} exited during start: ${this.logTail()}`);
      if (existsSync(this.socketPath)) {
        // After a kill the old socket file is still there until the new process binds: a capped
        // reconnect backoff sees it bind instead of waiting out grpc-js's 1 s and longer.
        const c = this.csi ?? new CsiClient(`unix://${this.socketPath}`, 60_000, { maxReconnectBackoffMs: 200, ...(this.opts.gate !== undefined ? { gate: this.opts.gate } : {}) });
        this.csi = c;
        try {
          const r = await c.probe({}, { timeoutMs: 2_000 });
          // The metrics endpoint opens just after the CSI socket: ready once both answer.
          if (r.ready?.value !== false && await this.metricsListening()) return;
        } catch (err) {
          lastErr = err;
        }
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`driver of node ${this.nodeName} not ready after ${this.opts.startTimeoutMs ?? 30_000} ms: ${String(lastErr)}`);
  }

  /** Whether the driver's metrics port takes connections (true when it serves none). */
  private metricsListening(): Promise<boolean> {
    const port = this.port;
    if (this.opts.metrics !== true || port === undefined) return Promise.resolve(true);
    return new Promise((resolve) => {
      const socket = connect({ host: '127.0.0.1', port });
      socket.once('connect', () => { socket.destroy(); resolve(true); });
      socket.once('error', () => { socket.destroy(); resolve(false); });
    });
  }

  /**
   * The last lines the driver wrote, for error messages (the work dir is removed afterwards).
   * A driver that refused its flags wrote its reason, then the usage text: the reason, then.
   */
  logTail(): string {
    const usage = /^usage: /m.exec(this.firstOutput);
    const out = usage !== null && usage.index > 0 ? this.firstOutput.slice(0, usage.index) : this.recentOutput;
    return out.trim().split('\n').slice(-12).join('\n') || '(no output)';
  }

  /** SIGTERM and wait; SIGKILL if it does not exit within `graceMs`. */
  async stop(graceMs = 20_000): Promise<void> {
    const child = this.child;
    if (child === undefined) return;
    this.csi?.close();
    this.csi = undefined;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }

  /** SIGKILL, as a crash would. */
  async kill(): Promise<void> {
    const child = this.child;
    if (child === undefined) return;
    this.csi?.close();
    this.csi = undefined;
    child.kill('SIGKILL');
    await this.exited;
  }

  private medium(p: PoolSpec): BtrfsMedium {
    let m = this.media.get(p.name);
    if (m === undefined) {
      mkdirSync(join(this.opts.nodeDir, 'media'), { recursive: true });
      if (this.ns === undefined) throw new Error(`node ${this.nodeName}: a disk before the node's mount namespace`);
      m = new BtrfsMedium(join(this.opts.nodeDir, 'media', `${p.name}.img`), this.poolDir(p.name), p.sizeBytes, this.ns);
      this.media.set(p.name, m);
    }
    return m;
  }

  /** Takes down the disks of dir pools once the driver is stopped for good. */
  async releaseMedia(): Promise<void> {
    for (const m of this.media.values()) await m.release();
    this.media.clear();
  }

  /**
   * Ends the node's mount namespace once its driver is stopped and its disks released; returns
   * the mounts a driver left below the node's directory, which it unmounted first.
   */
  async closeNamespace(): Promise<string[]> {
    const ns = this.ns;
    this.ns = undefined;
    return ns === undefined ? [] : ns.close(this.opts.nodeDir);
  }

  /** Ends the node's mount namespace at once, its mounts with it (the bench's emergency stop). */
  async killNamespace(): Promise<void> {
    const ns = this.ns;
    this.ns = undefined;
    await ns?.kill();
  }

  closeLog(): void {
    this.log?.end();
    this.log = undefined;
  }
}

/** A TCP port on 127.0.0.1 that nothing listens on at this moment. */
function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const a = probe.address();
      const port = a !== null && typeof a !== 'string' ? a.port : 0;
      probe.close(() => (port > 0 ? resolve(port) : reject(new Error('no free loopback port'))));
    });
  });
}
