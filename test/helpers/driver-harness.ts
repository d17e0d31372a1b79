// Test harness: runs a real `lode driver` process on fresh pool and target directories, and cleans every trace up.
import { spawn, type ChildProcess } from 'node:child_process';
import { promises as fs, readdirSync, readlinkSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CsiClient } from '../../src/csi/client.js';
import { listLoopDevices, detachLoop, detachPending } from '../../src/sys/loop.js';
import { readMountTable } from '../../src/sys/mounts.js';
import { run } from '../../src/sys/exec.js';
import { thaw } from '../../src/sys/freeze.js';
import { DRIVER_NODE_FLAGS } from '../../src/util/driver-node-flags.js';
import type { VolumeCapability } from '../../src/csi/types.js';
import { scaledDeadlineMs } from './vm-slowdown.js';

type AccessMode = NonNullable<NonNullable<VolumeCapability['access_mode']>['mode']>;

/** The compiled CLI (dist/src/cli/main.js), found from this compiled file (dist/test/helpers). */
export const LODE_CLI = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

export interface PoolSpec {
  name: string;
  /** Pool size option, e.g. "1Gi"; omitted = the filesystem's free space. */
  size?: string;
  /** Extra options appended to the spec, e.g. "max-volume-size=64Mi". */
  extra?: string;
  /** An existing directory to use instead of one under the harness's work dir (e.g. a test's own filesystem). */
  dir?: string;
}

export interface HarnessOptions {
  nodeId?: string;
  pools?: PoolSpec[];
  /** Extra driver flags; a function gets the harness's root, for flags that name paths inside it. */
  extraArgs?: string[] | ((root: string) => string[]);
  /** The `lode` command to run, taking `driver` and its flags; the driver benchmark starts one without the bundle. */
  cli?: string;
}

export class DriverHarness {
  client!: CsiClient;
  proc: ChildProcess | undefined;
  /** Everything the driver wrote to stderr (its JSON log). */
  log = '';
  readonly nodeId: string;
  readonly pools: PoolSpec[];

  private constructor(readonly root: string, private readonly opts: HarnessOptions) {
    this.nodeId = opts.nodeId ?? 'node-a';
    this.pools = opts.pools ?? [{ name: 'fast', size: '1Gi' }];
  }

  /** Makes a work dir and starts the driver. */
  static async start(opts: HarnessOptions = {}, env: NodeJS.ProcessEnv = {}): Promise<DriverHarness> {
    const root = await fs.mkdtemp(path.join(os.tmpdir(), 'lode-test-'));
    const h = new DriverHarness(root, opts);
    for (const p of h.pools) await fs.mkdir(h.poolDir(p.name), { recursive: true });
    await fs.mkdir(h.kubeletDir, { recursive: true });
    try {
      await h.startProcess(env);
    } catch (err) {
      await h.cleanup();
      throw err;
    }
    return h;
  }

  get socket(): string { return path.join(this.root, 'csi.sock'); }
  get endpoint(): string { return `unix://${this.socket}`; }
  get kubeletDir(): string { return path.join(this.root, 'kubelet'); }
  poolDir(name: string): string { return this.pools.find((p) => p.name === name)?.dir ?? path.join(this.root, 'pools', name); }
  /** A staging path like kubelet's, under the allowed target root. */
  stagingPath(tag: string): string { return path.join(this.kubeletDir, 'plugins', 'staging', tag); }
  /** A publish target like kubelet's (its parent exists, the target does not). */
  targetPath(tag: string): string { return path.join(this.kubeletDir, 'pods', tag, 'mount'); }

  args(): string[] {
    const args = [...DRIVER_NODE_FLAGS, this.opts.cli ?? LODE_CLI, 'driver', '--endpoint', this.endpoint, '--node-id', this.nodeId, '--target-root', this.kubeletDir];
    for (const p of this.pools) {
      let spec = `${p.name}=${this.poolDir(p.name)}`;
      if (p.size) spec += `,size=${p.size}`;
      if (p.extra) spec += `,${p.extra}`;
      args.push('--pool', spec);
    }
    const extra = this.opts.extraArgs;
    return [...args, ...(typeof extra === 'function' ? extra(this.root) : extra ?? [])];
  }

  /** Starts the process (with extra environment, e.g. LODE_FAILPOINT) and waits until Probe says ready. */
  async startProcess(env: NodeJS.ProcessEnv = {}): Promise<void> {
    const proc = spawn(process.execPath, this.args(), { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ...env } });
    this.proc = proc;
    proc.stderr?.setEncoding('utf8');
    proc.stderr?.on('data', (d: string) => { this.log += d; });
    // A capped reconnect backoff: with grpc-js's own (1 s, then longer), every start waited for the
    // next attempt rather than for the driver, about 1 s on this host and 2-6 s in the VM.
    this.client = new CsiClient(this.endpoint, scaledDeadlineMs(60_000), { maxReconnectBackoffMs: 100 });
    // A bound against a driver that never comes up, not a speed check: under the VM's emulation
    // on a busy host, loading node's modules over 9p alone has taken 17 s; stretched by the VM's
    // measured slowdown, so a loaded host gives a slow start, not a failure.
    const deadline = Date.now() + scaledDeadlineMs(60_000);
    for (;;) {
      if (proc.exitCode !== null) throw new Error(`driver exited with ${proc.exitCode}: ${this.log}`);
      try {
        // Once it listens, a Probe gets the rest of the bound: a pool's health check runs a quota
        // tool, and a spawn under the VM's emulation on a loaded host has taken over a second.
        const res = await this.client.probe({}, { timeoutMs: Math.max(1000, deadline - Date.now()) });
        if (res.ready?.value) return;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) throw new Error(`driver did not become ready: ${this.log}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** SIGKILL: no chance to clean anything, as in a node crash. */
  async kill(): Promise<void> {
    await this.signal('SIGKILL');
  }

  /** SIGTERM: a clean stop. */
  async stop(): Promise<void> {
    await this.signal('SIGTERM');
  }

  /** Resolves when the process has exited by itself (e.g. a failpoint fired). */
  async exited(): Promise<void> {
    const proc = this.proc;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    await new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  }

  private async signal(sig: NodeJS.Signals): Promise<void> {
    const proc = this.proc;
    this.client?.close();
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      proc.once('exit', () => resolve());
      proc.kill(sig);
    });
  }

  async restart(env: NodeJS.ProcessEnv = {}): Promise<void> {
    await this.stop();
    await this.startProcess(env);
  }

  /** Mounts below this harness's directory, deepest first. */
  async mounts(): Promise<string[]> {
    return (await readMountTable()).map((m) => m.mountPoint).filter((m) => m.startsWith(this.root + '/')).sort().reverse();
  }

  /** Loop devices backed by files of this harness. */
  async loops(): Promise<string[]> {
    // Pools given a directory of their own (a filesystem made for the test) lie outside the root.
    const dirs = [this.root, ...this.pools.map((p) => p.dir).filter((d): d is string => d !== undefined)];
    return (await listLoopDevices()).filter((d) => dirs.some((dir) => d.backingFile.startsWith(dir + '/'))).map((d) => d.device);
  }

  /**
   * The test's loop devices the driver left attached, after a kill. A device detached while
   * something still held it (a killed call's umount still running) is only marked to be
   * cleared at its last close (sysfs `loop/autoclear`, which the driver never sets at attach):
   * that one is waited for, up to `boundMs`; an unmarked one was never detached and counts at once.
   * One still marked after the bound counts while any process holds it open (a killed call's
   * tool that outlived its driver would); one no process holds is held by a mount in another
   * mount namespace, which the driver, working in this one, never makes: another test's
   * process that copied the mount table while the volume was mounted (a container starting
   * beside this test). The driver has done its part, and the kernel clears the device when that
   * namespace lets the filesystem go.
   */
  async loopsLeftAfterKill(boundMs = 30_000): Promise<string[]> {
    const until = Date.now() + scaledDeadlineMs(boundMs);
    for (;;) {
      const left = await this.loops();
      const marked = await Promise.all(left.map(detachPending));
      if (left.length === 0 || marked.includes(false)) return left;
      if (Date.now() >= until) {
        const pids = readdirSync('/proc').filter((p) => /^[0-9]+$/.test(p)).map(Number);
        return left.filter((d) => pids.some((pid) => holdsOpen(pid, d)));
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** Files in a pool's volume folder (images and records). */
  async poolFiles(pool = this.pools[0]?.name ?? 'fast'): Promise<string[]> {
    try {
      return (await fs.readdir(path.join(this.poolDir(pool), 'volumes'))).sort();
    } catch {
      return [];
    }
  }

  /** Stops the driver and removes every mount, loop device and file it may have left. */
  async cleanup(): Promise<void> {
    await this.stop();
    for (const m of await this.mounts()) {
      // A filesystem left frozen (a driver killed mid-copy that no restart thawed) would outlive
      // a lazy unmount, frozen, and keep its loop device for good: thaw it first.
      await thaw(m).catch(() => undefined);
      await run('umount', ['-l', m]).catch(() => undefined);
    }
    for (const d of await this.loops()) await detachLoop(d).catch(() => undefined);
    await fs.rm(this.root, { recursive: true, force: true });
  }
}

export const MiB = 2 ** 20;

/** A filesystem capability as kubelet sends it. */
export function mountCap(fsType = 'ext4', mode: AccessMode = 'SINGLE_NODE_WRITER', flags: string[] = []): VolumeCapability {
  return { mount: { fs_type: fsType, mount_flags: flags }, access_mode: { mode } };
}

/** A raw block capability. */
export function blockCap(mode: AccessMode = 'SINGLE_NODE_WRITER'): VolumeCapability {
  return { block: {}, access_mode: { mode } };
}

/** Whether process `pid` has `device` open. */
function holdsOpen(pid: number, device: string): boolean {
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return false;
  }
  return fds.some((fd) => {
    try {
      return readlinkSync(`/proc/${pid}/fd/${fd}`) === device;
    } catch {
      return false;
    }
  });
}
