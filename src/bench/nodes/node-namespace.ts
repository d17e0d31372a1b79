// A simulated node's own mount namespace, held open by a sleeping process: its driver and disks mount there, so no node's calls pay for the whole cluster's mount table.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { run, type ExecResult } from '../../sys/exec.js';
import { readMountTable, type MountEntry } from '../../sys/mounts.js';

/**
 * On one kernel, every mount of every simulated node used to sit in the bench's one mount
 * table, and each mount, unmount and table read of a node's driver grew slower with the whole
 * cluster's (docs/benchmarks.md, "Where the 100 x 10 time goes"). A node's machine has its own:
 * here a namespace made with `unshare --mount --propagation private`, a copy of the host's
 * table at that moment into which nothing of the host or another node propagates, and out of
 * which nothing leaks. It lives as long as its holder, a `sleep` the bench keeps for the node's
 * lifetime, across driver restarts: a restarted driver finds its node's mounts as a restarted
 * container does. The holder dies with the bench (parent-death signal), and the namespace's
 * mounts with it.
 */
export class NodeNamespace {
  private readonly exited: Promise<void>;

  private constructor(private readonly holder: ChildProcess, readonly pid: number) {
    this.exited = new Promise((resolve) => {
      if (holder.exitCode !== null || holder.signalCode !== null) resolve();
      else holder.once('exit', () => resolve());
    });
  }

  /**
   * Makes the namespace, waits until its holder is inside it, and drops from it the mounts of
   * loop devices it copied from the host, except one holding `keep` (the node's directory).
   * Those belong to whatever else runs on this machine (another bench, a test beside this one):
   * a copy left here would keep its filesystem and loop device busy after its owner unmounted
   * it, until this node ends, and a later fsck, resize or detach of that device would fail.
   */
  static async open(keep: string): Promise<NodeNamespace> {
    const holder = spawn('setpriv', ['--pdeathsig', 'KILL', '--', 'unshare', '--mount', '--propagation', 'private', '--',
      'sh', '-c', 'echo ready; exec sleep infinity'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    holder.stderr?.setEncoding('utf8');
    holder.stderr?.on('data', (d: string) => { stderr += d; });
    const ready = await new Promise<boolean>((resolve) => {
      const lines = createInterface({ input: holder.stdout! });
      lines.once('line', (l) => { lines.close(); resolve(l === 'ready'); });
      holder.once('exit', () => resolve(false));
      holder.once('error', () => resolve(false));
    });
    if (!ready || holder.pid === undefined) {
      holder.kill('SIGKILL');
      throw new Error(`could not make a node's mount namespace (unshare --mount): ${stderr.trim() || 'the holder exited'}`);
    }
    const ns = new NodeNamespace(holder, holder.pid);
    try {
      const foreign = (await ns.mounts()).map((m) => ({ at: m.mountPoint, source: m.source }))
        .filter((m) => m.source.startsWith('/dev/loop') && !(keep === m.at || keep.startsWith(m.at.endsWith('/') ? m.at : `${m.at}/`)))
        .map((m) => m.at).sort((a, b) => b.length - a.length);
      if (foreign.length > 0) await ns.run('umount', ['-l', ...foreign]);
    } catch (err) {
      await ns.kill();
      throw new Error(`could not drop the host's loop mounts from a node's mount namespace: ${(err as Error).message}`);
    }
    return ns;
  }

  /** The command line that runs `command` inside the namespace (nsenter execs it: the process keeps its own pid). */
  command(command: string, args: readonly string[]): [string, string[]] {
    return ['nsenter', [`--mount=/proc/${this.pid}/ns/mnt`, '--', command, ...args]];
  }

  /** Runs a tool inside the namespace. */
  run(command: string, args: readonly string[]): Promise<ExecResult> {
    const [cmd, full] = this.command(command, args);
    return run(cmd, full);
  }

  /** Where the bench, outside, finds `path` as the node sees it: through the holder's root, which resolves in its namespace. */
  view(path: string): string {
    return `/proc/${this.pid}/root${path}`;
  }

  /** The namespace's mount table. */
  mounts(): Promise<MountEntry[]> {
    return readMountTable(`/proc/${this.pid}/mountinfo`);
  }

  /** Mount points at or below `dir` inside the namespace, deepest first. */
  async mountsUnder(dir: string): Promise<string[]> {
    const prefix = dir.endsWith('/') ? dir : `${dir}/`;
    return (await this.mounts()).map((m) => m.mountPoint).filter((m) => m === dir || m.startsWith(prefix))
      .sort((a, b) => b.length - a.length);
  }

  /**
   * Unmounts whatever is still mounted at or below `dir` inside (what a node's teardown should
   * have left nothing of), then ends the namespace; returns what it had to unmount.
   */
  async close(dir: string): Promise<string[]> {
    const cleaned: string[] = [];
    if (this.holder.exitCode === null && this.holder.signalCode === null) {
      for (const m of await this.mountsUnder(dir).catch(() => [])) {
        await this.run('umount', [m]).catch(() => this.run('umount', ['-l', m]).catch(() => undefined));
        cleaned.push(`umount ${m}`);
      }
    }
    this.holder.kill('SIGKILL');
    await this.exited;
    return cleaned;
  }

  /** Ends the namespace at once (the bench's emergency stop); its mounts go with it. */
  async kill(): Promise<void> {
    this.holder.kill('SIGKILL');
    await this.exited;
  }
}

