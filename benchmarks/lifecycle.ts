// The control-path lifecycle measurement shared by the driver and data-path benchmarks: Lode over CSI vs the raw tools.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { run } from '../src/sys/exec.js';
import { type DriverHarness, MiB, mountCap } from '../test/helpers/driver-harness.js';

export const GiB = 1024 * MiB;

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

export function median(xs: number[]): number {
  return percentile([...xs].sort((a, b) => a - b), 50);
}

export async function timeMs(fn: () => Promise<unknown>): Promise<number> {
  const t = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t) / 1e6;
}

/**
 * One 1 GiB volume through Lode's whole lifecycle, on `pool` (the driver's default without
 * one): ext4, or with `fsType` '' the pool's own filesystem (a dir pool's).
 */
export async function lodeLifecycle(h: DriverHarness, i: number, pool?: string, fsType = 'ext4'): Promise<number> {
  const tag = pool ? `life-${pool}-${i}` : `life-${i}`;
  const staging = h.stagingPath(tag);
  const target = h.targetPath(tag);
  await fs.mkdir(path.dirname(target), { recursive: true });
  return timeMs(async () => {
    const cap = mountCap(fsType);
    const v = await h.client.createVolume({
      name: tag, capacity_range: { required_bytes: GiB }, volume_capabilities: [cap], parameters: pool ? { pool } : {},
    });
    const id = v.volume?.volume_id ?? '';
    await h.client.nodeStageVolume({ volume_id: id, staging_target_path: staging, volume_capability: cap });
    await h.client.nodePublishVolume({ volume_id: id, staging_target_path: staging, target_path: target, volume_capability: cap });
    await h.client.nodeUnpublishVolume({ volume_id: id, target_path: target });
    await h.client.nodeUnstageVolume({ volume_id: id, staging_target_path: staging });
    await h.client.deleteVolume({ volume_id: id });
  });
}

/** The same system work done with the tools by hand (a loop image): the floor Lode is measured against. */
export async function toolsLifecycle(dir: string, i: number, preallocate: boolean, directIo = false): Promise<number> {
  const image = path.join(dir, `raw-${i}.img`);
  const staging = path.join(dir, `raw-stage-${i}`);
  const target = path.join(dir, `raw-target-${i}`);
  return timeMs(async () => {
    if (preallocate) await run('fallocate', ['--length', String(GiB), image]);
    else await run('truncate', ['-s', String(GiB), image]);
    const dev = (await run('losetup', ['--find', '--show', ...(directIo ? ['--direct-io=on'] : []), image])).stdout.trim();
    await run('mkfs.ext4', ['-F', '-q', '-b', '4096', '-m', '0', '-E', 'nodiscard,lazy_itable_init=1,lazy_journal_init=1', dev]);
    await fs.mkdir(staging);
    await run('mount', ['-t', 'ext4', dev, staging]);
    await fs.mkdir(target);
    await run('mount', ['--bind', staging, target]);
    await run('umount', [target]);
    await fs.rmdir(target);
    await run('umount', [staging]);
    await run('losetup', ['--detach', dev]);
    await fs.rm(image);
    await fs.rmdir(staging);
  });
}

/** The same system work for a quota directory on btrfs, by hand: a subvolume with a limit, bound at the staging path and the target. */
export async function btrfsToolsLifecycle(dir: string, i: number): Promise<number> {
  const subvolume = path.join(dir, `raw-${i}`);
  const staging = path.join(dir, `raw-stage-${i}`);
  const target = path.join(dir, `raw-target-${i}`);
  return timeMs(async () => {
    await run('btrfs', ['subvolume', 'create', subvolume]);
    await run('btrfs', ['qgroup', 'limit', String(GiB), subvolume]);
    await fs.mkdir(staging);
    await run('mount', ['--bind', subvolume, staging]);
    await fs.mkdir(target);
    await run('mount', ['--bind', staging, target]);
    await run('umount', [target]);
    await fs.rmdir(target);
    await run('umount', [staging]);
    await fs.rmdir(staging);
    await run('btrfs', ['subvolume', 'delete', subvolume]);
  });
}
