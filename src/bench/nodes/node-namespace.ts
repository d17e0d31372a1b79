// A simulated node's own mount namespace, copied from the run's mount template and held open by a sleeping process: its driver and disks mount there, so no node's calls pay for the whole cluster's mount table.
import type { ExecResult } from '../../sys/exec.js';
import type { MountEntry } from '../../sys/mounts.js';
import { commandIn, mountsIn, NamespaceHolder, runIn, viewIn } from './namespace-holder.js';
import type { MountTemplate } from './mount-template.js';

/**
 * On one kernel, every mount of every simulated node used to sit in the bench's one mount
 * table, and each mount, unmount and table read of a node's driver grew slower with the whole
 * cluster's (docs/benchmarks.md, "Where the 100 x 10 time goes"). A node's machine has its own:
 * a private copy of the run's template (MountTemplate), not of the host's table, so it never
 * holds a filesystem of whatever else runs on this machine; nothing of the host or another node
 * propagates into it, and nothing leaks out. It lives as long as its holder, kept for the node's
 * lifetime, across driver restarts: a restarted driver finds its node's mounts as a restarted
 * container does.
 */
export class NodeNamespace {
  private constructor(private readonly holder: NamespaceHolder) {}

  get pid(): number {
    return this.holder.pid;
  }

  /** Makes a node's namespace as a copy of `template`, and waits until its holder is inside. */
  static async open(template: Pick<MountTemplate, 'namespace'>): Promise<NodeNamespace> {
    return new NodeNamespace(await NamespaceHolder.spawn(template.namespace, 'a node\'s mount namespace'));
  }

  /** The command line that runs `command` inside the namespace (nsenter execs it: the process keeps its own pid). */
  command(command: string, args: readonly string[]): [string, string[]] {
    return commandIn(this.pid, command, args);
  }

  /** Runs a tool inside the namespace. */
  run(command: string, args: readonly string[]): Promise<ExecResult> {
    return runIn(this.pid, command, args);
  }

  /** Where the bench, outside, finds `path` as the node sees it: through the holder's root, which resolves in its namespace. */
  view(path: string): string {
    return viewIn(this.pid, path);
  }

  /** The namespace's mount table. */
  mounts(): Promise<MountEntry[]> {
    return mountsIn(this.pid);
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
    if (this.holder.alive) {
      for (const m of await this.mountsUnder(dir).catch(() => [])) {
        await this.run('umount', [m]).catch(() => this.run('umount', ['-l', m]).catch(() => undefined));
        cleaned.push(`umount ${m}`);
      }
    }
    await this.holder.kill();
    return cleaned;
  }

  /** Ends the namespace at once (the bench's emergency stop); its mounts go with it. */
  async kill(): Promise<void> {
    await this.holder.kill();
  }
}
