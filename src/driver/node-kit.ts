// What the Node service's calls share: target path checks, mount ownership and nesting checks, target cleanup.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { Pool } from '../pool/pool.js';
import type { VolumeCatalog } from '../pool/volume-catalog.js';
import { volumePaths, type VolumeRecord } from '../pool/volume-record.js';
import { deviceNumber } from '../sys/device-id.js';
import { run } from '../sys/exec.js';
import { backingFileOf } from '../sys/loop.js';
import type { MountEntry } from '../sys/mounts.js';
import type { DriverContext } from './context.js';
import { failedPrecondition, notFound } from './errors.js';
import { isInside, requireResolvedTargetPath, resolveExisting } from './validate.js';

export function sameFlags(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && [...a].sort().join(',') === [...b].sort().join(',');
}

/** Removes the directory or empty device file the driver made at a target; never anything with content. */
export async function removeTarget(target: string): Promise<void> {
  let st;
  try {
    st = await fs.lstat(target);
  } catch {
    return;
  }
  if (st.isDirectory()) await fs.rmdir(target).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOENT') throw failedPrecondition(`cannot remove ${target}: ${err.message}`);
  });
  else if (st.isFile() && st.size === 0) await fs.unlink(target).catch(() => undefined);
}

export async function unmount(target: string): Promise<void> {
  await run('umount', [target], { timeoutMs: 120_000 });
}

export function readOnlyMount(m: MountEntry): boolean {
  return m.options.includes('ro');
}

/** The driver context plus the checks every Node call makes. */
export class NodeKit {
  readonly catalog: VolumeCatalog;

  constructor(readonly ctx: DriverContext) {
    this.catalog = ctx.catalog;
  }

  /** A stage or publish path: allowed, normalised and with symlinks resolved. */
  checkPath(p: string, field: string): Promise<string> {
    return requireResolvedTargetPath(p, field, this.ctx.targetRoots(), this.catalog.poolDirs());
  }

  /**
   * Mounting at `p` must neither hide the mounts below it (another volume's staging mount or
   * publication) nor land inside a Lode volume (the mkdir and the mount would write into that
   * volume's filesystem and pin it).
   */
  async refuseNesting(p: string, mounts: readonly MountEntry[]): Promise<void> {
    for (const e of mounts) {
      if (isInside(e.mountPoint, p)) throw failedPrecondition(`${e.mountPoint} is mounted below ${p}; mounting there would hide it`);
      if (isInside(p, e.mountPoint) && /^\/dev\/loop\d+$/.test(e.source)) {
        const backing = await backingFileOf(e.source);
        if (backing !== undefined && this.catalog.poolDirs().some((dir) => isInside(backing, dir))) {
          throw failedPrecondition(`${p} lies inside ${e.mountPoint}, a Lode volume; mounting there would write into it`);
        }
      }
    }
  }

  /** A ready volume of this node, or NOT_FOUND. */
  volume(id: string): VolumeRecord {
    const r = this.catalog.get(id);
    if (!r || r.state !== 'ready') throw notFound(`volume ${id} does not exist on node ${this.ctx.config.nodeId}`);
    return r;
  }

  /** True when the mount at a target is this volume's: same filesystem, or a bind of one of its devices. */
  async belongsTo(m: MountEntry, r: VolumeRecord, pool: Pool): Promise<boolean> {
    const devices = [await pool.device(r), ...r.publications.map((p) => p.device)].filter((d): d is string => d !== undefined);
    for (const d of devices) {
      if (m.devId === (await deviceNumber(d))) return true;
      if (m.root === '/' + path.basename(d)) return true;
    }
    return false;
  }

  /** `p` if it is where the volume is staged or published, else NOT_FOUND. */
  async requirePathOf(r: VolumeRecord, p: string): Promise<string> {
    // Records hold resolved paths (see requireResolvedTargetPath), so the caller's is resolved too.
    const normal = path.isAbsolute(p) ? await resolveExisting(path.normalize(p).replace(/(.)\/+$/, '$1')) : p;
    if (!volumePaths(r).includes(normal)) throw notFound(`volume ${r.id} is not staged or published at "${p}"`);
    return normal;
  }
}
