// The real kubernetes-csi sidecars of a bench run: per node the DaemonSet's csi-provisioner, csi-snapshotter, csi-resizer and node-driver-registrar, and one snapshot-controller, against the run's API.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { binaryVersion, csiBinaries } from './csi-tools.js';
import { daemonSetArgs } from './daemonset-args.js';
import { SidecarProcess } from './sidecar-process.js';
import type { Component } from './components.js';

export const REAL_BINARIES = ['csi-provisioner', 'csi-snapshotter', 'csi-resizer', 'csi-node-driver-registrar', 'snapshot-controller'] as const;
type Binary = typeof REAL_BINARIES[number];

/** Where the real sidecars live and reach the cluster. */
export interface RealSidecarsOptions {
  workDir: string;
  kubeconfig: string;
  namespace: string;
  driverName: string;
  /** Told about every exit the bench did not ask for (the run reports them); withDriver: the first exit after its driver was killed. */
  onExit?: (name: string, how: string, withDriver: boolean) => void;
}

/** One node's processes and its registrar's socket. */
export interface NodeSidecars {
  processes: SidecarProcess[];
  registrationSocket: string;
  registrar: SidecarProcess;
}

export class RealSidecars {
  private bins: Record<Binary, string> | undefined;
  private readonly versions = new Map<Binary, string>();
  private readonly perNode = new Map<string, SidecarProcess[]>();
  /** Which binary each process runs, for the report. */
  private readonly binaryOf = new Map<SidecarProcess, Binary>();
  private controller: SidecarProcess | undefined;
  private readonly logDir: string;

  constructor(private readonly opts: RealSidecarsOptions) {
    this.logDir = join(opts.workDir, 'sidecars');
  }

  /** Finds every binary (or throws MissingToolError naming what is missing) and reads their versions. */
  async prepare(): Promise<void> {
    this.bins = await csiBinaries(REAL_BINARIES);
    mkdirSync(this.logDir, { recursive: true });
    for (const b of REAL_BINARIES) this.versions.set(b, await binaryVersion(this.bins[b]));
  }

  private bin(b: Binary): string {
    if (this.bins === undefined) throw new Error('RealSidecars.prepare() was not awaited');
    return this.bins[b];
  }

  private process(binary: Binary, scope: string, args: string[], env: Record<string, string>, hostname?: string): SidecarProcess {
    const name = `${binary}/${scope}`;
    // The registrar talks to kubelet only, never to the API (it has no --kubeconfig).
    const api = binary === 'csi-node-driver-registrar' ? [] : [`--kubeconfig=${this.opts.kubeconfig}`];
    const p = new SidecarProcess({
      name, binary: this.bin(binary), args: [...api, ...args], env,
      logFile: join(this.logDir, `${scope}-${binary}.log`), ...(hostname !== undefined ? { hostname } : {}),
    }, (s, how, withDriver) => this.opts.onExit?.(s.spec.name, how, withDriver));
    this.binaryOf.set(p, binary);
    p.start();
    return p;
  }

  /** The cluster's snapshot-controller, with distributed snapshotting as the DaemonSet's csi-snapshotter needs. */
  startController(): void {
    this.controller = this.process('snapshot-controller', 'cluster', ['--enable-distributed-snapshotting', '--v=4'], {});
  }

  /**
   * A node's sidecars with the DaemonSet's args and env: NODE_NAME, NAMESPACE, POD_NAME as the
   * fieldRefs give them, the pod's name as hostname. The registrar's registration directory
   * is the node's plugins_registry under its work dir; the registration path it reports is
   * the socket itself (the container's view and the host's are one here).
   */
  startNode(node: string, socket: string, nodeDir: string, pod: string, snapshots: boolean): NodeSidecars {
    const place = { socket, namespace: this.opts.namespace, verbosity: 4, drop: ['--http-endpoint', '--kubelet-registration-path'] };
    const env = { NODE_NAME: node, NAMESPACE: this.opts.namespace, POD_NAME: pod };
    const registry = join(nodeDir, 'plugins_registry');
    mkdirSync(registry, { recursive: true });
    const processes = [
      this.process('csi-provisioner', node, daemonSetArgs('csi-provisioner', place), env, pod),
      this.process('csi-resizer', node, daemonSetArgs('csi-resizer', place), env, pod),
    ];
    // As the sidecar itself exits at start without CREATE_DELETE_SNAPSHOT: not started then.
    if (snapshots) processes.push(this.process('csi-snapshotter', node, daemonSetArgs('csi-snapshotter', place), env, pod));
    const registrar = this.process('csi-node-driver-registrar', node,
      [...daemonSetArgs('node-driver-registrar', place), `--kubelet-registration-path=${socket}`, `--plugin-registration-path=${registry}`, '--v=4'], env, pod);
    processes.push(registrar);
    this.perNode.set(node, processes);
    return { processes, registrar, registrationSocket: join(registry, `${this.opts.driverName}-reg.sock`) };
  }

  /**
   * A node's driver was killed: the sidecars that hold a CSI connection for their whole life
   * (csi-provisioner, csi-snapshotter, csi-resizer: csi-lib-utils' ExitOnConnectionLoss) exit
   * when it goes, and kubelet restarts them; their next exit is reported as that. The registrar
   * only talks to the driver at start, so it keeps running.
   */
  driverKilled(node: string): void {
    for (const p of this.perNode.get(node) ?? []) if (this.binaryOf.get(p) !== 'csi-node-driver-registrar') p.expectExitWithDriver();
  }

  /** A node's driver is started again: its sidecars' exits are their own again (see driverKilled). */
  driverBack(node: string): void {
    for (const p of this.perNode.get(node) ?? []) p.driverBack();
  }

  /** A lost node's sidecars stop with it (SIGKILL: the machine is gone). */
  async stopNode(node: string, force = true): Promise<void> {
    await Promise.all((this.perNode.get(node) ?? []).map((p) => p.stop(force)));
  }

  /** Every process stopped and reaped: SIGTERM with a grace period, or SIGKILL when forced. */
  async stopAll(force = false): Promise<void> {
    const all = [...[...this.perNode.values()].flat(), ...(this.controller ? [this.controller] : [])];
    await Promise.all(all.map((p) => p.stop(force)));
  }

  /** A node's processes that are running now, by pid (for tests: a lost node's must be none). */
  nodePids(node: string): number[] {
    return (this.perNode.get(node) ?? []).filter((p) => p.running).map((p) => p.pid ?? 0).filter((p) => p > 0);
  }

  /** The processes still running (for tests and the report). */
  pids(): number[] {
    return [...[...this.perNode.values()].flat(), ...(this.controller ? [this.controller] : [])].map((p) => p.pid ?? 0).filter((p) => p > 0);
  }

  components(): Component[] {
    const row = (p: SidecarProcess, name: Binary, scope: string): Component => ({
      name, scope, implementation: 'real', version: this.versions.get(name) ?? 'unknown', binary: p.spec.binary, log: p.spec.logFile, restarts: p.restarts,
    });
    const out: Component[] = [];
    if (this.controller) out.push(row(this.controller, 'snapshot-controller', 'cluster'));
    for (const [node, ps] of this.perNode) {
      for (const p of ps) out.push(row(p, this.binaryOf.get(p)!, node));
    }
    return out;
  }
}
