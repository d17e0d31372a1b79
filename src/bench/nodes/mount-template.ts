// The clean mount namespace every simulated node's namespace is copied from: it holds no other test's or bench's mounts, so no node ever keeps one of theirs busy.
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { log } from '../../util/log.js';
import { mountsIn, namespacePath, NamespaceHolder, runIn, viewIn } from './namespace-holder.js';

/**
 * The holder pid of a template made by whoever runs the bench beside other work (scripts/test.sh
 * makes one before any test mounts anything, and every bench of the run copies from it).
 */
export const MOUNT_TEMPLATE_ENV = 'LODE_BENCH_MOUNT_TEMPLATE';

/**
 * `unshare --mount` copies the table of the namespace it runs in, and every filesystem in the
 * copy stays alive until the copy drops it: made from the host's table, a node's namespace held
 * the loop-backed filesystems of the tests beside the bench, whose owners' unmounts then left
 * them alive and their loop devices' detach deferred (a SIGKILL campaign failed on it). A
 * template is a namespace nobody mounts in: made once, before the others' mounts (test.sh) or
 * with the loop mounts present at that moment dropped once (a bench on its own), and private,
 * so nothing mounted on the host later reaches it. A node's namespace copies the template.
 */
export class MountTemplate {
  private constructor(readonly pid: number, private readonly own: NamespaceHolder | undefined) {}

  /** What a node's namespace is made from (nsenter --mount=...). */
  get namespace(): string {
    return namespacePath(this.pid);
  }

  /** Whether this run made the template (and ends it) rather than adopting the one it was given. */
  get made(): boolean {
    return this.own !== undefined;
  }

  /**
   * The template for a bench run working in `workDir`: the one named by LODE_BENCH_MOUNT_TEMPLATE
   * in `env` if it shows `workDir` (a template made before a filesystem the work dir is on was
   * mounted would give the nodes an empty directory there), else one made now.
   */
  static async forRun(workDir: string, env: NodeJS.ProcessEnv = process.env): Promise<MountTemplate> {
    const given = env[MOUNT_TEMPLATE_ENV];
    if (given !== undefined && given !== '') {
      const pid = parseHolderPid(given);
      const unusable = whyNotUsable(pid, workDir);
      if (unusable === undefined) return new MountTemplate(pid, undefined);
      log('warn', `bench: the mount template ${MOUNT_TEMPLATE_ENV}=${given} ${unusable}; the bench makes its own`, { workDir });
    }
    return MountTemplate.make(workDir);
  }

  /**
   * Makes a template from the bench's own table, dropping once the mounts of loop devices in it,
   * except one holding `keep` (the work dir): those belong to whatever else runs on this machine
   * (another bench, a test beside this one), and a copy here would keep their filesystems busy.
   */
  static async make(keep: string): Promise<MountTemplate> {
    const holder = await NamespaceHolder.spawn(undefined, 'the bench\'s mount template');
    const t = new MountTemplate(holder.pid, holder);
    try {
      const dir = resolve(keep);
      const foreign = (await mountsIn(t.pid)).filter((m) => m.source.startsWith('/dev/loop') && !holds(m.mountPoint, dir))
        .map((m) => m.mountPoint).sort((a, b) => b.length - a.length);
      if (foreign.length > 0) await runIn(t.pid, 'umount', ['-l', ...foreign]);
    } catch (err) {
      await holder.kill();
      throw new Error(`could not drop the host's loop mounts from the bench's mount template: ${(err as Error).message}`);
    }
    return t;
  }

  /** Ends a template this run made; one it was given belongs to its maker. */
  async close(): Promise<void> {
    await this.own?.kill();
  }
}

/** The pid in LODE_BENCH_MOUNT_TEMPLATE; a value that is none is an error, not a reason to copy something else. */
function parseHolderPid(value: string): number {
  const pid = /^[1-9][0-9]*$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(pid)) throw new Error(`${MOUNT_TEMPLATE_ENV} must be the pid of a mount template's holder, not '${value}'`);
  try {
    statSync(namespacePath(pid));
  } catch {
    throw new Error(`${MOUNT_TEMPLATE_ENV}=${value}: no such process (the mount template's holder has gone)`);
  }
  return pid;
}

/** Why the template of `pid` cannot serve a run in `workDir`, or undefined if it can. */
function whyNotUsable(pid: number, workDir: string): string | undefined {
  // The bench's own namespace as a template would copy the very table templates exist to avoid.
  if (statSync(namespacePath(pid)).ino === statSync('/proc/self/ns/mnt').ino) return 'is the bench\'s own mount namespace';
  const dir = resolve(workDir);
  try {
    const here = statSync(dir, { bigint: true });
    const there = statSync(viewIn(pid, dir), { bigint: true });
    if (here.dev === there.dev && here.ino === there.ino) return undefined;
  } catch { /* not there at all: the same answer */ }
  return `does not show the work dir ${dir} as the bench sees it (a filesystem mounted after the template was made?)`;
}

/** Whether the mount at `mountPoint` holds `dir` (is it or one of its parents). */
function holds(mountPoint: string, dir: string): boolean {
  return mountPoint === '/' || dir === mountPoint || dir.startsWith(`${mountPoint}/`);
}
