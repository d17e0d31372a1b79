// The mount table as the kernel has it (/proc/self/mountinfo) and the mount/umount calls Lode makes.
import { readFileSync } from 'node:fs';
import { outsideCall } from '../util/call-signal.js';
import { callUnlessRefused, run } from './exec.js';
import type { SystemCall } from './tool-helper.js';
import { MS_BIND, mountFlags, remountAttributes } from './mount-flags.js';

export interface MountEntry {
  /** The kernel's id of the mount (mountinfo's first field), which a handle on it also reports. */
  id: number;
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
 * `file` is this process's table unless another's is named (/proc/PID/mountinfo: the table of
 * the mount namespace process PID is in).
 */
export async function readMountTable(file = '/proc/self/mountinfo'): Promise<MountEntry[]> {
  const text = readFileSync(file, 'utf8');
  const entries: MountEntry[] = [];
  for (const line of text.split('\n')) {
    if (!line) continue;
    const fields = line.split(' ');
    const sep = fields.indexOf('-');
    if (sep < 6) continue;
    entries.push({
      id: Number(fields[0]),
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

/** The mount with the kernel's id `id` (AnchoredPath.mountedHere), if it is still there. */
export async function mountById(id: number): Promise<MountEntry | undefined> {
  return (await readMountTable()).find((e) => e.id === id);
}

/** The topmost mount at exactly `mountPoint`, if any (reads the table; see mountAt to reuse one). */
export async function findMount(mountPoint: string): Promise<MountEntry | undefined> {
  return mountAt(await readMountTable(), mountPoint);
}

/** A mount or unmount by the tool helper (true when done), else by the tool: see callUnlessRefused. */
async function bySystemCall(call: Exclude<SystemCall, { name: 'fallocate' }>): Promise<boolean> {
  return (await callUnlessRefused(call)) !== null;
}

/**
 * Mount targets arrive as handle references (see sys/beneath.ts): `-c` keeps mount(8) from
 * canonicalising them back into a path string, which would resolve the links again; mount(2)
 * resolves them as given. `options` are what mount(8) would read; `dataOptions` are the
 * filesystem's own (xfs's nouuid), which Lode adds and the kernel takes as they are. Where every
 * option is a flag (mount-flags.ts) the helper mounts it; otherwise mount(8) does.
 */
export async function mountDevice(device: string, targetRef: string, fsType: string, options: readonly string[], dataOptions: readonly string[] = []): Promise<void> {
  const flags = mountFlags(options);
  if (flags !== undefined && await bySystemCall({ name: 'mount', source: device, target: targetRef, fsType, flags, data: dataOptions.join(',') })) return;
  const all = [...options, ...dataOptions];
  const args = ['-c', '-t', fsType];
  if (all.length > 0) args.push('-o', all.join(','));
  args.push(device, targetRef);
  await run('mount', args, { timeoutMs: 120_000 });
}

/**
 * Bind-mounts `sourceRef` (a directory or a device node) at `targetRef`, as `mount --bind`
 * (not recursive). Options need a second remount (the kernel ignores them on the initial bind),
 * which must name the new mount, so it goes through `remountRef`: a lookup that crosses into
 * what is now mounted at the target. Like mount(8)'s, the remount keeps the flags the bind took
 * from its source that the options do not name: the helper makes it by mount_setattr(2) where the
 * options are attributes it can set (mount-flags.ts), mount(8) does otherwise (or on a kernel
 * before 5.12, which has no mount_setattr).
 */
export async function bindMount(sourceRef: string, targetRef: string, remountRef: string, options: readonly string[] = []): Promise<void> {
  if (!(await bySystemCall({ name: 'mount', source: sourceRef, target: targetRef, fsType: '', flags: MS_BIND, data: '' }))) {
    await run('mount', ['-c', '--bind', sourceRef, targetRef], { timeoutMs: 60_000 });
  }
  if (options.length > 0) {
    try {
      const attributes = remountAttributes(options);
      if (attributes === undefined || !(await bySystemCall({ name: 'mount_setattr', target: remountRef, ...attributes }))) {
        await run('mount', ['-c', '-o', ['remount', 'bind', ...options].join(','), remountRef], { timeoutMs: 60_000 });
      }
    } catch (err) {
      // Leave nothing half-done: a bind that could not take its options (read-only among them) must
      // not stay, also when the remount failed because the call's deadline killed it.
      await outsideCall(() => unmountRef(remountRef)).catch(() => undefined);
      throw err;
    }
  }
}

/** Unmounts what is mounted at `ref`, a lookup that crosses into the mount (never a handle on the mount itself, which would keep it busy). */
export async function unmountRef(ref: string): Promise<void> {
  if (await bySystemCall({ name: 'umount2', target: ref, flags: 0 })) return;
  await run('umount', ['-c', ref], { timeoutMs: 120_000 });
}

/** Unmounts `target` if something is mounted there; true if it unmounted. For paths from records, which are real paths. */
export async function unmountIfMounted(target: string): Promise<boolean> {
  if (!(await findMount(target))) return false;
  if (await bySystemCall({ name: 'umount2', target, flags: 0 })) return true;
  await run('umount', [target], { timeoutMs: 120_000 });
  return true;
}
