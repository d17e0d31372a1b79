// Loop devices: find, attach, detach and resize them, reading sysfs rather than parsing tool output.
import { accessSync, existsSync, promises as fs, readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { log } from '../util/log.js';
import { callUnlessRefused, ExecError, run } from './exec.js';

const SYS_BLOCK = '/sys/block';

/** How long a detach waits for the kernel to let go of a device someone else still held (see detachLoop). */
const DETACH_SETTLE_MS = 2_000;
const DETACH_POLL_MS = 10;

export interface LoopDevice {
  /** /dev/loopN */
  device: string;
  /** The backing file as the kernel reports it (without a " (deleted)" suffix). */
  backingFile: string;
  readOnly: boolean;
}

// sysfs is read synchronously: it answers from memory and never hangs, and a trip through
// the thread pool per file costs more than the read itself.
async function readTrim(file: string): Promise<string | undefined> {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** The backing file of one loop device, or undefined when it is not attached. */
export async function backingFileOf(device: string): Promise<string | undefined> {
  const backing = await readTrim(path.join(SYS_BLOCK, path.basename(device), 'loop', 'backing_file'));
  return backing ? backing.replace(/ \(deleted\)$/, '') : undefined;
}

/**
 * Whether `device` is marked to be cleared at its last close: what a detach of a device still
 * held open leaves (the driver never attaches with the mark).
 */
export async function detachPending(device: string): Promise<boolean> {
  return (await readTrim(path.join(SYS_BLOCK, path.basename(device), 'loop', 'autoclear'))) === '1';
}

async function isReadOnly(device: string): Promise<boolean> {
  return (await readTrim(path.join(SYS_BLOCK, path.basename(device), 'ro'))) === '1';
}

/** One loop device as the kernel has it now, or undefined when it is not attached. */
export async function describeLoop(device: string): Promise<LoopDevice | undefined> {
  const backingFile = await backingFileOf(device);
  return backingFile === undefined ? undefined : { device, backingFile, readOnly: await isReadOnly(device) };
}

/** Every attached loop device, from sysfs; no subprocess. */
export async function listLoopDevices(): Promise<LoopDevice[]> {
  let names: string[];
  try {
    names = readdirSync(SYS_BLOCK).filter((n) => /^loop\d+$/.test(n));
  } catch {
    return [];
  }
  // Only a bound device has the loop/ directory. The kernel keeps every device node it ever made
  // (a node that ran many volumes has hundreds), and reading each one's backing_file would fail
  // for all of those, at the cost of an error thrown and caught per device.
  const bound = names.filter((name) => existsSync(path.join(SYS_BLOCK, name, 'loop')));
  const found = await Promise.all(bound.map(async (name) => ({ device: `/dev/${name}`, backingFile: await backingFileOf(name) })));
  const attached = found.filter((d): d is { device: string; backingFile: string } => d.backingFile !== undefined);
  return Promise.all(attached.map(async (d) => ({ ...d, readOnly: await isReadOnly(d.device) })));
}

/**
 * Whether `d` is backed by `file`. The kernel names a backing file by its path as the reader's
 * root sees it; a file attached through a mount that the reader cannot reach (one of another
 * mount namespace that has ended since, like the driver's previous container) reads as its path
 * inside that mount: a tail of `file`'s path, which counts only when the device's backing inode
 * (from the kernel's loop status, through losetup) is `file`'s too.
 */
export async function backedBy(d: LoopDevice, file: string): Promise<boolean> {
  if (d.backingFile === file) return true;
  if (!d.backingFile.startsWith('/') || !file.endsWith(d.backingFile)) return false;
  const [ino, st] = await Promise.all([backingInode(d.device), fs.stat(file).catch(() => undefined)]);
  return ino !== undefined && st !== undefined && st.ino === ino;
}

/** The inode number of the device's backing file, or undefined when it is not attached. */
async function backingInode(device: string): Promise<number | undefined> {
  try {
    const { stdout } = await run('losetup', ['--list', '--noheadings', '--output', 'BACK-INO', device], { timeoutMs: 60_000 });
    const n = Number(stdout.trim());
    return stdout.trim() !== '' && Number.isSafeInteger(n) ? n : undefined;
  } catch {
    return undefined;
  }
}

/** Of `devices`, those backed by `file` (see backedBy). */
export async function devicesBacking(devices: readonly LoopDevice[], file: string): Promise<LoopDevice[]> {
  const found: LoopDevice[] = [];
  for (const d of devices) if (await backedBy(d, file)) found.push(d);
  return found;
}

export interface LoopAttachment {
  device: string;
  /** Whether the kernel really runs the device with direct I/O (it may refuse, e.g. on a filesystem without O_DIRECT). */
  directIo: boolean;
}

/**
 * The attach itself: a free device is picked, as losetup --find does. With `directIo` the device
 * reads and writes the image with O_DIRECT, bypassing the host's page cache: the data is then
 * cached once, by the filesystem inside the volume, and an fsync inside reaches the disk without
 * a second writeback. Where the image's filesystem has no O_DIRECT (ramfs, some FUSE mounts) the
 * kernel refuses the whole attach, or attaches buffered; either way the device still gets made,
 * and sysfs says what we got. The tool helper attaches by the loop ioctls (no process); where it
 * is not used, or the kernel refuses it both ways (a kernel before 5.8 has no LOOP_CONFIGURE),
 * losetup does, and says why it could not.
 */
export async function attachNewLoop(imagePath: string, readOnly: boolean, directIo: boolean): Promise<LoopAttachment> {
  let device = await attachThroughHelper(imagePath, readOnly, directIo);
  if (device === null) device = await attachWithLosetup(imagePath, readOnly, directIo);
  if (!/^\/dev\/loop\d+$/.test(device)) throw new Error(`the attach gave "${device}", expected /dev/loopN`);
  return { device, directIo: (await readTrim(path.join(SYS_BLOCK, path.basename(device), 'loop', 'dio'))) === '1' };
}

/** The device the tool helper attached, with direct I/O if asked and else without it; null if it did not. */
async function attachThroughHelper(file: string, readOnly: boolean, directIo: boolean): Promise<string | null> {
  for (const dio of directIo ? [true, false] : [false]) {
    const device = await callUnlessRefused({ name: 'loop_attach', file, readOnly, directIo: dio });
    if (device !== null) return device;
  }
  return null;
}

async function attachWithLosetup(imagePath: string, readOnly: boolean, directIo: boolean): Promise<string> {
  const args = ['--find', '--show'];
  if (readOnly) args.push('--read-only');
  let stdout: string;
  try {
    ({ stdout } = await run('losetup', [...args, ...(directIo ? ['--direct-io=on'] : []), imagePath], { timeoutMs: 60_000 }));
  } catch (err) {
    if (!directIo || !(err instanceof ExecError) || err.spawnCode !== undefined) throw err;
    ({ stdout } = await run('losetup', [...args, imagePath], { timeoutMs: 60_000 }));
  }
  return stdout.trim();
}

/** Detaches `device`; a device that is already gone is not an error. */
export async function detachLoop(device: string, settleMs = DETACH_SETTLE_MS): Promise<void> {
  const backing = await backingFileOf(device);
  if (backing === undefined) return;
  if ((await callUnlessRefused({ name: 'loop_detach', device })) === null) await run('losetup', ['--detach', device], { timeoutMs: 60_000 });
  // The kernel detaches a device that another process still has open (a tool reading it, a
  // filesystem still mounted in another mount namespace) only at its last close: losetup
  // succeeds at once and the device goes on holding the image. The caller's answer says the
  // device is gone, so wait for that, bounded; a device still held then is cleared by the
  // kernel when its holder lets go, and is said in the log. The same number may be taken
  // for another image meanwhile, which counts as gone.
  const until = Date.now() + settleMs;
  while ((await backingFileOf(device)) === backing) {
    if (Date.now() >= until) {
      log('warn', 'a detached loop device is still held open elsewhere; the kernel clears it when its holder lets go', { device, backingFile: backing });
      return;
    }
    await sleep(DETACH_POLL_MS);
  }
}

/** Makes the kernel re-read the backing file's size after it grew. */
export async function refreshLoopCapacity(device: string): Promise<void> {
  await run('losetup', ['--set-capacity', device], { timeoutMs: 60_000 });
}

/** True when this kernel can attach loop devices at all. */
export async function loopSupported(): Promise<boolean> {
  try {
    accessSync('/dev/loop-control');
    return true;
  } catch {
    return false;
  }
}
