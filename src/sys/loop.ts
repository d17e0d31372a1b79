// Loop devices: find, attach, detach and resize them, reading sysfs rather than parsing tool output.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { run } from './exec.js';

const SYS_BLOCK = '/sys/block';

export interface LoopDevice {
  /** /dev/loopN */
  device: string;
  /** The backing file as the kernel reports it (without a " (deleted)" suffix). */
  backingFile: string;
  readOnly: boolean;
  sizeBytes: number;
}

async function readTrim(file: string): Promise<string | undefined> {
  try {
    return (await fs.readFile(file, 'utf8')).trim();
  } catch {
    return undefined;
  }
}

/** Every attached loop device. One sysfs read per device; no subprocess. */
export async function listLoopDevices(): Promise<LoopDevice[]> {
  let names: string[];
  try {
    names = (await fs.readdir(SYS_BLOCK)).filter((n) => /^loop\d+$/.test(n));
  } catch {
    return [];
  }
  const found = await Promise.all(names.map(async (name): Promise<LoopDevice | undefined> => {
    const backing = await readTrim(path.join(SYS_BLOCK, name, 'loop', 'backing_file'));
    if (backing === undefined || backing === '') return undefined;
    const ro = await readTrim(path.join(SYS_BLOCK, name, 'ro'));
    const sectors = await readTrim(path.join(SYS_BLOCK, name, 'size'));
    return {
      device: `/dev/${name}`,
      backingFile: backing.replace(/ \(deleted\)$/, ''),
      readOnly: ro === '1',
      sizeBytes: Number(sectors ?? '0') * 512,
    };
  }));
  return found.filter((d): d is LoopDevice => d !== undefined);
}

/** Loop devices backed by `imagePath` (an absolute, resolved path). */
export async function loopDevicesFor(imagePath: string): Promise<LoopDevice[]> {
  return (await listLoopDevices()).filter((d) => d.backingFile === imagePath);
}

/**
 * Attaches `imagePath` and returns the device. A writable attach reuses an existing
 * writable device for the same file, so retries after a crash never stack devices.
 */
export async function attachLoop(imagePath: string, readOnly = false): Promise<string> {
  const existing = (await loopDevicesFor(imagePath)).find((d) => d.readOnly === readOnly);
  if (existing) return existing.device;
  const args = ['--find', '--show'];
  if (readOnly) args.push('--read-only');
  args.push(imagePath);
  const { stdout } = await run('losetup', args, { timeoutMs: 60_000 });
  const device = stdout.trim();
  if (!/^\/dev\/loop\d+$/.test(device)) throw new Error(`losetup printed "${device}", expected /dev/loopN`);
  return device;
}

/** Detaches `device`; a device that is already gone is not an error. */
export async function detachLoop(device: string): Promise<void> {
  const name = path.basename(device);
  if ((await readTrim(path.join(SYS_BLOCK, name, 'loop', 'backing_file'))) === undefined) return;
  await run('losetup', ['--detach', device], { timeoutMs: 60_000 });
}

/** Makes the kernel re-read the backing file's size after it grew. */
export async function refreshLoopCapacity(device: string): Promise<void> {
  await run('losetup', ['--set-capacity', device], { timeoutMs: 60_000 });
}

/** True when this kernel can attach loop devices at all. */
export async function loopSupported(): Promise<boolean> {
  try {
    await fs.access('/dev/loop-control');
    return true;
  } catch {
    return false;
  }
}
