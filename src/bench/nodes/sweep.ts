// Last-resort cleanup of a bench work dir: unmount anything mounted beneath it and detach loop devices backed by files in it.
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';

const run = promisify(execFile);

function unescapeMountPath(p: string): string {
  return p.replace(/\\([0-7]{3})/g, (_m, oct: string) => String.fromCharCode(parseInt(oct, 8)));
}

/** Mount points at or below `dir`, deepest first. */
export async function mountsUnder(dir: string): Promise<string[]> {
  const text = await readFile('/proc/mounts', 'utf8');
  const prefix = dir.endsWith('/') ? dir : dir + '/';
  return text.split('\n').map((l) => l.split(' ')[1]).filter((m): m is string => m !== undefined)
    .map(unescapeMountPath).filter((m) => m === dir || m.startsWith(prefix))
    .sort((a, b) => b.length - a.length);
}

/** Loop devices whose backing file lies below `dir`. */
export async function loopsUnder(dir: string): Promise<string[]> {
  let out: string;
  try {
    out = (await run('losetup', ['--list', '--noheadings', '--output', 'NAME,BACK-FILE'], { env: { ...process.env, LC_ALL: 'C' } })).stdout;
  } catch {
    return [];
  }
  const prefix = dir.endsWith('/') ? dir : dir + '/';
  const devs: string[] = [];
  for (const line of out.split('\n')) {
    const m = /^(\S+)\s+(.*?)(?: \(deleted\))?\s*$/.exec(line.trim());
    if (m && m[2]!.startsWith(prefix)) devs.push(m[1]!);
  }
  return devs;
}

/** Unmounts and detaches whatever the drivers left; returns what it had to clean (empty when all was clean). */
export async function sweep(dir: string): Promise<string[]> {
  const cleaned: string[] = [];
  for (const m of await mountsUnder(dir)) {
    try {
      await run('umount', [m], { env: { ...process.env, LC_ALL: 'C' } });
    } catch {
      await run('umount', ['-l', m], { env: { ...process.env, LC_ALL: 'C' } }).catch(() => undefined);
    }
    cleaned.push(`umount ${m}`);
  }
  for (const d of await loopsUnder(dir)) {
    await run('losetup', ['-d', d], { env: { ...process.env, LC_ALL: 'C' } }).catch(() => undefined);
    cleaned.push(`losetup -d ${d}`);
  }
  return cleaned;
}
