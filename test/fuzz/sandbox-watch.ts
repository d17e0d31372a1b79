// What the fuzz suites watch outside the driver: a sentinel tree, every mount point outside the allowed dirs, the driver's RSS.
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { backingFileOf } from '../../src/sys/loop.js';

/** Every entry below `dir` as "relative-path type size mode [hash or link target]", sorted. */
export async function treeSnapshot(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string): Promise<void> => {
    let names: string[];
    try {
      names = await fs.readdir(d);
    } catch (err) {
      out.push(`${path.relative(dir, d) || '.'} unreadable ${(err as NodeJS.ErrnoException).code ?? ''}`);
      return;
    }
    for (const name of names.sort()) {
      const p = path.join(d, name);
      const st = await fs.lstat(p);
      const rel = path.relative(dir, p);
      const mode = (st.mode & 0o7777).toString(8);
      if (st.isSymbolicLink()) out.push(`${rel} link ${await fs.readlink(p)}`);
      else if (st.isDirectory()) {
        out.push(`${rel} dir ${mode} dev=${st.dev}`);
        await walk(p);
      } else if (st.isFile()) out.push(`${rel} file ${st.size} ${mode} ${createHash('sha256').update(await fs.readFile(p)).digest('hex').slice(0, 16)}`);
      else out.push(`${rel} other ${mode} rdev=${st.rdev}`);
    }
  };
  await walk(dir);
  return out;
}

/** One line of /proc/self/mountinfo: the kernel's view, parsed here apart from the driver's own code. */
export interface MountLine {
  id: string;
  /** The mounted directory (or file) of the source filesystem: "/loop6" for a bind of a device node. */
  root: string;
  mountPoint: string;
  options: string[];
  source: string;
}

const unescape = (s: string) => s.replace(/\\([0-7]{3})/g, (_m, o: string) => String.fromCharCode(parseInt(o, 8)));

export async function mountLines(): Promise<MountLine[]> {
  const text = await fs.readFile('/proc/self/mountinfo', 'utf8');
  const out: MountLine[] = [];
  for (const line of text.split('\n')) {
    const f = line.split(' ');
    const sep = f.indexOf('-');
    if (sep < 6) continue;
    out.push({ id: f[0] ?? '', root: unescape(f[3] ?? ''), mountPoint: unescape(f[4] ?? ''), options: (f[5] ?? '').split(','), source: f[sep + 2] ?? '' });
  }
  return out;
}

function under(p: string, dir: string): boolean {
  return p === dir || p.startsWith(dir.endsWith('/') ? dir : dir + '/');
}

/**
 * Mounts this run must not change: everything outside `allowed` (the target roots and pools of
 * this driver) that is this run's (below its own root, or of a loop device backed by one of its
 * images, also a bind of such a device node elsewhere) or the system's (outside the temp dir).
 * Other test processes on this machine mount their own loop devices in the temp dir at the same
 * time; those are theirs, not a change this driver made.
 */
export async function foreignMounts(ownRoot: string, allowed: readonly string[]): Promise<string[]> {
  const tmp = os.tmpdir();
  const out: string[] = [];
  for (const m of await mountLines()) {
    if (allowed.some((a) => under(m.mountPoint, a))) continue;
    let ours = under(m.mountPoint, ownRoot) || !under(m.mountPoint, tmp);
    const loop = /^\/dev\/(loop\d+)$/.exec(m.source)?.[1] ?? /^\/(loop\d+)$/.exec(m.root)?.[1];
    if (!ours && loop !== undefined) ours = under((await backingFileOf(loop)) ?? '', ownRoot);
    if (ours) out.push(`${m.id} ${m.mountPoint} ${m.source}`);
  }
  return out.sort();
}

/** Set difference both ways, for a readable report. */
export function diff(before: readonly string[], after: readonly string[]): { added: string[]; removed: string[] } {
  const b = new Set(before);
  const a = new Set(after);
  return { added: after.filter((x) => !b.has(x)), removed: before.filter((x) => !a.has(x)) };
}

/** Resident memory of a process, in bytes (VmRSS of /proc/PID/status). */
export async function rssBytes(pid: number): Promise<number> {
  const text = await fs.readFile(`/proc/${pid}/status`, 'utf8');
  const kb = /^VmRSS:\s+(\d+) kB$/m.exec(text)?.[1];
  if (kb === undefined) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(kb) * 1024;
}
