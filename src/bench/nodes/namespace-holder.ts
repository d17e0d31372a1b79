// A sleeping process that holds a new private mount namespace open, and the ways into a namespace by a holder's pid: the one mechanism under the mount template and the nodes' namespaces.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { run, type ExecResult } from '../../sys/exec.js';
import { readMountTable, type MountEntry } from '../../sys/mounts.js';

/**
 * A mount namespace exists as long as something is in it; a `sleep` is the cheapest such thing.
 * It dies with the bench (parent-death signal, which survives the exec of unshare and sleep),
 * so a bench that crashes takes its namespaces, and the mounts only they hold, with it.
 */
export class NamespaceHolder {
  /** Resolves once the holder has exited. */
  readonly exited: Promise<void>;

  private constructor(private readonly child: ChildProcess, readonly pid: number) {
    this.exited = new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve();
      else child.once('exit', () => resolve());
    });
  }

  /**
   * Starts a holder in a new namespace made with `unshare --mount --propagation private`: a
   * copy of the table of the namespace it is made in, into which nothing propagates from there
   * later and out of which nothing leaks. `from` (a /proc/PID/ns/mnt) is the namespace to copy,
   * entered first; without it, the bench's own. Resolves once the holder is inside, set up.
   */
  static async spawn(from: string | undefined, what: string): Promise<NamespaceHolder> {
    const enter = from === undefined ? [] : ['nsenter', `--mount=${from}`, '--'];
    const holder = spawn('setpriv', ['--pdeathsig', 'KILL', '--', ...enter, 'unshare', '--mount', '--propagation', 'private', '--',
      'sh', '-c', 'echo ready; exec sleep infinity'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    holder.stderr?.setEncoding('utf8');
    holder.stderr?.on('data', (d: string) => { stderr += d; });
    // `ready` is printed by the shell unshare runs: after the namespace and its propagation are set.
    const ready = await new Promise<boolean>((resolve) => {
      const lines = createInterface({ input: holder.stdout! });
      lines.once('line', (l) => { lines.close(); resolve(l === 'ready'); });
      holder.once('exit', () => resolve(false));
      holder.once('error', () => resolve(false));
    });
    if (!ready || holder.pid === undefined) {
      holder.kill('SIGKILL');
      throw new Error(`could not make ${what} (${enter.length > 0 ? `nsenter --mount=${from}, then ` : ''}unshare --mount): ${stderr.trim() || 'the holder exited'}`);
    }
    return new NamespaceHolder(holder, holder.pid);
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Ends the namespace (once nothing else is in it), and the mounts only it holds with it. */
  async kill(): Promise<void> {
    this.child.kill('SIGKILL');
    await this.exited;
  }
}

/** The namespace of process `pid`, as a path nsenter and setns take. */
export function namespacePath(pid: number): string {
  return `/proc/${pid}/ns/mnt`;
}

/** The command line that runs `command` in the mount namespace of `pid` (nsenter execs it: the process keeps nsenter's pid). */
export function commandIn(pid: number, command: string, args: readonly string[]): [string, string[]] {
  return ['nsenter', [`--mount=${namespacePath(pid)}`, '--', command, ...args]];
}

/** Runs a tool in the mount namespace of `pid`. */
export function runIn(pid: number, command: string, args: readonly string[]): Promise<ExecResult> {
  const [cmd, full] = commandIn(pid, command, args);
  return run(cmd, full);
}

/** Where this process finds `path` as it resolves in the namespace of `pid`: through that process's root. */
export function viewIn(pid: number, path: string): string {
  return `/proc/${pid}/root${path}`;
}

/** The mount table of the namespace of `pid`. */
export function mountsIn(pid: number): Promise<MountEntry[]> {
  return readMountTable(`/proc/${pid}/mountinfo`);
}
