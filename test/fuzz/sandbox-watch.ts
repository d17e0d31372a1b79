// What the fuzz suites watch outside the driver: a sentinel tree, every mount point outside the allowed dirs, the driver's RSS.
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

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
    out.push({ id: f[0] ?? '', mountPoint: unescape(f[4] ?? ''), options: (f[5] ?? '').split(','), source: f[sep + 2] ?? '' });
  }
  return out;
}

function under(p: string, dir: string): boolean {
  return p === dir || p.startsWith(dir.endsWith('/') ? dir : dir + '/');
}

/**
 * Mounts this run must not change: everything except what lies below `allowed` (the target
 * roots and pools of this driver) and the work dirs of other Lode test processes that may run
 * at the same time on this machine (their own `lode-*` dirs in the temp dir, never ours).
 */
export async function foreignMounts(ownRoot: string, allowed: readonly string[]): Promise<string[]> {
  const tmp = os.tmpdir();
  const others = (p: string) => under(p, tmp) && !under(p, ownRoot) && /^lode-/.test(path.relative(tmp, p).split('/')[0] ?? '');
  return (await mountLines())
    .filter((m) => !allowed.some((a) => under(m.mountPoint, a)) && !others(m.mountPoint))
    .map((m) => `${m.id} ${m.mountPoint} ${m.source}`)
    .sort();
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
