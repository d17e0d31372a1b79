// Mount options the kernel takes as mount(2) flags or mount attributes, as mount(8) turns them into those: for the mounts the tool helper makes itself.

/** MS_* values from <linux/mount.h>, the same on every architecture Linux and Node.js share. */
const MS_RDONLY = 0x1;
const MS_NOSUID = 0x2;
const MS_NODEV = 0x4;
const MS_NOEXEC = 0x8;
const MS_SYNCHRONOUS = 0x10;
const MS_DIRSYNC = 0x80;
const MS_NOATIME = 0x400;
const MS_NODIRATIME = 0x800;
/** A bind mount (mount --bind): the one flag of the binds Lode makes. */
export const MS_BIND = 0x1000;
const MS_RELATIME = 0x200000;
const MS_STRICTATIME = 0x1000000;
const MS_LAZYTIME = 0x2000000;

/** Bits an option table maps each option to, and whether the option sets the bit or clears it. */
type OptionBits = ReadonlyMap<string, readonly [bit: number, set: boolean]>;

/**
 * Each option that is a flag: the flag, and whether the option sets it or clears it. These are
 * the options mount(8) gives the kernel as flags and never as the filesystem's own data, with
 * nothing else done for them; an option not here (a filesystem's own, or one only mount(8)
 * reads, such as "defaults" or "nofail") leaves the mount to mount(8), which knows them all.
 */
const FLAG_OPTIONS: OptionBits = new Map([
  ['ro', [MS_RDONLY, true]], ['rw', [MS_RDONLY, false]],
  ['nosuid', [MS_NOSUID, true]], ['suid', [MS_NOSUID, false]],
  ['nodev', [MS_NODEV, true]], ['dev', [MS_NODEV, false]],
  ['noexec', [MS_NOEXEC, true]], ['exec', [MS_NOEXEC, false]],
  ['sync', [MS_SYNCHRONOUS, true]], ['async', [MS_SYNCHRONOUS, false]],
  ['dirsync', [MS_DIRSYNC, true]],
  ['noatime', [MS_NOATIME, true]], ['atime', [MS_NOATIME, false]],
  ['nodiratime', [MS_NODIRATIME, true]], ['diratime', [MS_NODIRATIME, false]],
  ['relatime', [MS_RELATIME, true]], ['norelatime', [MS_RELATIME, false]],
  ['strictatime', [MS_STRICTATIME, true]], ['nostrictatime', [MS_STRICTATIME, false]],
  ['lazytime', [MS_LAZYTIME, true]], ['nolazytime', [MS_LAZYTIME, false]],
]);

/**
 * `options` applied in order through `table`, so the last of two contrary ones wins (as with
 * mount(8)): the bits they end up setting and those they end up clearing. Undefined when any
 * option is not in the table.
 */
function inOrder(options: readonly string[], table: OptionBits): { set: number; clear: number } | undefined {
  let set = 0;
  let clear = 0;
  for (const option of options) {
    const known = table.get(option);
    if (known === undefined) return undefined;
    const [bit, on] = known;
    set = on ? set | bit : set & ~bit;
    clear = on ? clear & ~bit : clear | bit;
  }
  return { set, clear };
}

/** The mount(2) flags of `options` (see inOrder); undefined when any option is not a flag (see FLAG_OPTIONS). */
export function mountFlags(options: readonly string[]): number | undefined {
  return inOrder(options, FLAG_OPTIONS)?.set;
}

/** MOUNT_ATTR_* values from <linux/mount.h>, for mount_setattr(2). */
const MOUNT_ATTR_RDONLY = 0x1;
const MOUNT_ATTR_NOSUID = 0x2;
const MOUNT_ATTR_NODEV = 0x4;
const MOUNT_ATTR_NOEXEC = 0x8;

/**
 * The options a remount of a bind may change by mount_setattr(2): each attribute on its own.
 * The atime options are not among them: there mount(8)'s classic remount and the attributes'
 * atime group part ways, and a bind with those is rare enough to leave to mount(8).
 */
const ATTRIBUTE_OPTIONS: OptionBits = new Map([
  ['ro', [MOUNT_ATTR_RDONLY, true]], ['rw', [MOUNT_ATTR_RDONLY, false]],
  ['nosuid', [MOUNT_ATTR_NOSUID, true]], ['suid', [MOUNT_ATTR_NOSUID, false]],
  ['nodev', [MOUNT_ATTR_NODEV, true]], ['dev', [MOUNT_ATTR_NODEV, false]],
  ['noexec', [MOUNT_ATTR_NOEXEC, true]], ['exec', [MOUNT_ATTR_NOEXEC, false]],
]);

/**
 * What `mount -o remount,bind,<options>` changes, as mount_setattr(2)'s attributes to set and to
 * clear: the options applied in order, the last of two contrary ones winning, and every attribute
 * they do not name kept as the mount has it (as mount(8) keeps it). Undefined when any option is
 * not one of ATTRIBUTE_OPTIONS.
 */
export function remountAttributes(options: readonly string[]): { set: number; clear: number } | undefined {
  return inOrder(options, ATTRIBUTE_OPTIONS);
}
