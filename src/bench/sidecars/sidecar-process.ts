// One real sidecar process, supervised as kubelet supervises a container: logs kept in a file, restarted with backoff when it exits, stopped and reaped on request.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { doublingDelayMs } from '../runtime/backoff.js';

export interface SidecarSpec {
  /** e.g. "csi-provisioner/node-1": names it in logs and errors. */
  name: string;
  binary: string;
  args: readonly string[];
  env: Record<string, string>;
  /** Where its stdout and stderr go (appended across restarts). */
  logFile: string;
  /**
   * The pod's hostname: each process gets a UTS namespace of its own named so, as each pod
   * has. client-go's leader election takes the hostname as its identity, so without this
   * every node's csi-resizer on one machine would believe it holds the Lease.
   */
  hostname?: string;
}

const STOP_GRACE_MS = 5_000;
const MAX_BACKOFF_MS = 10_000;
/** gRPC's reconnect backoff in csi-lib-utils is at most 1 s; the rest is slack for a loaded machine. */
const RECONNECT_GRACE_MS = 5_000;

export class SidecarProcess {
  private child: ChildProcess | undefined;
  private exit: Promise<void> = Promise.resolve();
  private log: WriteStream | undefined;
  private stopping = false;
  private backoff: NodeJS.Timeout | undefined;
  /** Unexpected exits so far (kubelet's restart count). */
  restarts = 0;
  /** The last unexpected exit, for the run's report. */
  lastExit: string | undefined;
  /**
   * Its driver was killed and it has not exited since: a sidecar that exits on losing its CSI
   * connection (csi-lib-utils' ExitOnConnectionLoss) is expected to, once. Kubelet restarts it all
   * the same; the run reports such an exit apart from the unexpected ones.
   */
  private driverLost = false;
  /**
   * Its driver is down (killed, not started again yet): a restarted sidecar that finds no driver
   * to ask its name exits again (csi-provisioner's start times out and exits 1), as often as
   * kubelet restarts it meanwhile; those exits are the driver's too.
   */
  private driverDown = false;
  /**
   * This process was started while its driver was down, and when the driver came back (ms since
   * the epoch). Its connect deadline may run out just as the driver returns (09's driver is down
   * 30 s; csi-provisioner's restart 1 s after the kill gives up connecting 30 s later, while gRPC's
   * reconnect backoff, up to 1 s, has not yet found the new socket): an exit within
   * RECONNECT_GRACE_MS of the driver's return, of a process that never saw the driver, is the
   * driver's too.
   */
  private startedWithoutDriver = false;
  private driverBackAt = 0;

  constructor(readonly spec: SidecarSpec, private readonly onExit: (s: SidecarProcess, how: string, withDriver: boolean) => void = () => {}) {}

  /** Its driver was just killed: its next exit is the one that follows (see driverLost), and so is every exit until the driver is back. */
  expectExitWithDriver(): void {
    this.driverLost = true;
    this.driverDown = true;
  }

  /** Its driver is started again: from now on only the one exit on the lost connection, if not seen yet, is the driver's. */
  driverBack(): void {
    this.driverDown = false;
    this.driverBackAt = Date.now();
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  start(): void {
    if (this.stopping || this.running) return;
    this.log ??= createWriteStream(this.spec.logFile, { flags: 'a' });
    this.startedWithoutDriver = this.driverDown;
    const command = this.spec.hostname === undefined
      ? [this.spec.binary, ...this.spec.args]
      // unshare execs sh in the new UTS namespace, and sh execs the binary: one pid throughout.
      : ['unshare', '--uts', '--', 'sh', '-c', 'hostname "$0" && exec "$@"', this.spec.hostname, this.spec.binary, ...this.spec.args];
    // setpriv sets the parent-death signal and execs the rest (kept across those execs): when the
    // bench dies, even by SIGKILL, which no handler of its own sees, the kernel kills the sidecar,
    // as a pod's containers go with it, instead of leaving it talking to an API that is gone. Its
    // own process group, as the drivers have: a Ctrl-C at the terminal reaches the bench only,
    // which then stops the sidecars itself.
    const child = spawn('setpriv', ['--pdeathsig', 'KILL', '--', ...command], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...this.spec.env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true,
    });
    this.child = child;
    child.stdout!.pipe(this.log, { end: false });
    child.stderr!.pipe(this.log, { end: false });
    this.exit = new Promise((resolve) => {
      child.on('error', (err) => { this.lastExit = `could not start: ${err.message}`; });
      child.on('close', (code, signal) => {
        resolve();
        if (this.stopping) return;
        const how = this.lastExit?.startsWith('could not start') ? this.lastExit : `exited (${signal ?? `code ${code}`})`;
        this.lastExit = how;
        this.restarts++;
        const withDriver = this.driverLost || this.driverDown || (this.startedWithoutDriver && Date.now() - this.driverBackAt < RECONNECT_GRACE_MS);
        this.driverLost = false;
        this.onExit(this, how, withDriver);
        // CrashLoopBackOff, shortened: 1 s, 2 s, 4 s ... up to 10 s.
        const delay = doublingDelayMs(this.restarts, 1000, MAX_BACKOFF_MS);
        this.backoff = setTimeout(() => this.start(), delay);
      });
    });
  }

  /** SIGTERM, SIGKILL after a grace period (or at once), and wait until it is reaped. */
  async stop(force = false): Promise<void> {
    this.stopping = true;
    if (this.backoff !== undefined) clearTimeout(this.backoff);
    const child = this.child;
    if (child !== undefined && this.running) {
      child.kill(force ? 'SIGKILL' : 'SIGTERM');
      const killer = force ? undefined : setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
      await this.exit;
      if (killer !== undefined) clearTimeout(killer);
    } else {
      await this.exit;
    }
    await new Promise<void>((resolve) => { if (this.log === undefined) resolve(); else this.log.end(resolve); });
    this.log = undefined;
  }
}
