// The options of the mounts Lode makes: read-only wins, the caller's flags are the caller's to get right, and a read-only mount is checked to be one.
import { ExecError } from '../../sys/exec.js';
import type { AnchoredPath } from '../../sys/beneath.js';
import { bindMount, mountById, mountDevice, unmountRef, type MountEntry } from '../../sys/mounts.js';
import { outsideCall } from '../../util/call-signal.js';
import { internal, invalidArgument } from '../rpc/errors.js';
import { printable } from '../rpc/printable.js';

export function sameFlags(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && [...a].sort().join(',') === [...b].sort().join(',');
}

export function readOnlyMount(m: MountEntry): boolean {
  return m.options.includes('ro');
}

/**
 * The options of a mount Lode makes: read-only wins over anything the caller's flags say
 * ("rw" is dropped and "ro" comes last, since mount(8) lets the last of two options win).
 */
export function mountOptions(readOnly: boolean, flags: readonly string[]): string[] {
  return readOnly ? [...flags.filter((f) => f !== 'rw'), 'ro'] : ['rw', ...flags];
}

/** Whether a mount made with `mountOptions(readOnly, flags)` comes out read-only: the last of "ro" and "rw" wins. */
export function endsReadOnly(readOnly: boolean, flags: readonly string[]): boolean {
  return mountOptions(readOnly, flags).filter((o) => o === 'ro' || o === 'rw').pop() === 'ro';
}

/**
 * Runs a mount that carries the caller's mount flags. mount(8) exits 32 when the kernel refuses
 * the mount, and with flags the caller chose, those are what the filesystem refused (a flag it
 * does not know, "uid=0" on ext4, "dax" on a loop device...): the caller's to fix.
 */
export async function withCallerFlags<T>(flags: readonly string[], field: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (flags.length > 0 && err instanceof ExecError && err.exitCode === 32) {
      throw invalidArgument(`${field}.mount_flags (${printable(flags.join(','))}) were refused by the filesystem: ${err.message}`);
    }
    throw err;
  }
}

/**
 * Mounts the filesystem on `device` at an opened stage or publish entry, with the caller's
 * flags, and read-only when asked whatever the flags say: the one way a volume's filesystem is
 * mounted, for staging and for inline volumes alike.
 */
export async function mountFilesystem(entry: AnchoredPath, device: string, fsType: string, readOnly: boolean, flags: readonly string[]): Promise<void> {
  await entry.withEntry('directory', (ref) => withCallerFlags(flags, 'volume_capability', () =>
    mountDevice(device, ref, fsType, mountOptions(readOnly, flags), ownOptions(fsType))));
  if (readOnly) await ensureReadOnly(entry);
}

/**
 * Binds the directory `sourceRef` at an opened stage or publish entry, with the caller's flags,
 * and read-only when asked: the one way a directory is bind-mounted, for a directory volume's
 * staging and for publishing a staged filesystem alike. The kernel ignores options on the first
 * bind; only a remount applies them (read-only last).
 */
export async function bindDirectory(entry: AnchoredPath, sourceRef: string, readOnly: boolean, flags: readonly string[]): Promise<void> {
  const options = readOnly ? mountOptions(true, flags) : flags;
  await entry.withEntry('directory', (ref) => withCallerFlags(flags, 'volume_capability', () => bindMount(sourceRef, ref, entry.ref, options)));
  if (readOnly) await ensureReadOnly(entry);
}

/**
 * Options Lode adds to every mount of `fsType`. XFS refuses a second mount of a filesystem
 * UUID, and a snapshot's restores and clones carry their source's: without `nouuid` a copy
 * could not be mounted beside its source, nor the source beside it. The check guards against
 * one filesystem mounted through two devices, which a volume's one device never is.
 */
function ownOptions(fsType: string): string[] {
  return fsType === 'xfs' ? ['nouuid'] : [];
}

/**
 * Fails, and takes the mount down again, when a mount that must be read-only is not. The mount
 * is found through the entry's handle, not its path: a directory above renamed meanwhile by
 * someone racing the path would otherwise hide it, and leave a writable mount up.
 */
export async function ensureReadOnly(anchored: AnchoredPath): Promise<void> {
  const id = anchored.mountedHere();
  const m = id === undefined ? undefined : await mountById(id);
  if (m && readOnlyMount(m)) return;
  if (m) await outsideCall(() => unmountRef(anchored.ref)).catch(() => undefined);
  throw internal(`the mount at ${anchored.path} came out writable although read-only was asked; it was taken down`);
}

