// The mount table as the kernel has it (/proc/self/mountinfo) and the mount/umount calls Lode makes.
import { readFileSync } from 'node:fs';
import { run } from './exec.js';

export interface MountEntry {
  mountPoint: string;
  /** Path inside the source filesystem that is mounted (not "/" for bind mounts of a subtree or a file). */
  root: string;
  fsType: string;
  source: string;
  /** Per-mount options, e.g. ["rw", "relatime"]. */
  options: string[];
  /** "major:minor" of the mounted filesystem's device. */
  devId: string;
}

/** mountinfo escapes space, tab, newline and backslash as octal. */
function unescape(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_m, oct: string) => String.fromCharCode(parseInt(oct, 8)));
}

/**
 * Read synchronously: procfs answers from memory and never hangs, and a trip through the
 * thread pool costs more than the read (measured: a few ms per call on a 2-core VM).
 */
export async function readMountTable(): Promise<MountEntry[]> {
  const text = readFileSync('/proc/self/mountinfo', 'utf8');
  const entries: MountEntry[] = [];
  for (const line of text.split('\n')) {
    if (!line) continue;
    const fields = line.split(' ');
    const sep = fields.indexOf('-');
    if (sep < 6) continue;
    entries.push({
      devId: fields[2] ?? '',
      root: unescape(fields[3] ?? ''),
      mountPoint: unescape(fields[4] ?? ''),
      options: (fields[5] ?? '').split(','),
      fsType: fields[sep + 1] ?? '',
      source: unescape(fields[sep + 2] ?? ''),
    });
  }
  return entries;
}

/** The topmost mount at exactly `mountPoint` in `table`, if any. */
export function mountAt(table: readonly MountEntry[], mountPoint: string): MountEntry | undefined {
  let found: MountEntry | undefined;
  for (const e of table) if (e.mountPoint === mountPoint) found = e;
  return found;
}

/** The topmost mount at exactly `mountPoint`, if any (reads the table; see mountAt to reuse one). */
export async function findMount(mountPoint: string): Promise<MountEntry | undefined> {
  return mountAt(await readMountTable(), mountPoint);
}

export async function mountDevice(device: string, target: string, fsType: string, options: readonly string[]): Promise<void> {
  const args = ['-t', fsType];
  if (options.length > 0) args.push('-o', options.join(','));
  args.push(device, target);
  await run('mount', args, { timeoutMs: 120_000 });
}

/**
 * Bind-mounts `source` (a directory or a device node) at `target`. Read-only needs a
 * second remount: the kernel ignores "ro" on the initial bind.
 */
export async function bindMount(source: string, target: string, readOnly: boolean, options: readonly string[] = []): Promise<void> {
  await run('mount', ['--bind', source, target], { timeoutMs: 60_000 });
  if (readOnly || options.length > 0) {
    const opts = ['remount', 'bind', ...(readOnly ? ['ro'] : []), ...options];
    try {
      await run('mount', ['-o', opts.join(','), target], { timeoutMs: 60_000 });
    } catch (err) {
      // Leave nothing half-done: a bind that could not be made read-only must not stay writable.
      await run('umount', [target], { timeoutMs: 60_000 }).catch(() => undefined);
      throw err;
    }
  }
}

/** Unmounts `target` if something is mounted there; true if it unmounted. */
export async function unmountIfMounted(target: string): Promise<boolean> {
  if (!(await findMount(target))) return false;
  await run('umount', [target], { timeoutMs: 120_000 });
  return true;
}
