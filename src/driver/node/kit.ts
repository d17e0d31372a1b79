// What the Node service's calls share: target paths resolved beneath their root, locks on volume and path, and the nesting check.
import { existsSync, realpathSync } from 'node:fs';
import * as path from 'node:path';
import { status } from '@grpc/grpc-js';
import type { VolumeCatalog } from '../../catalog/volume-catalog.js';
import { volumePaths, type VolumeRecord } from '../../pool/volume-record.js';
import { openBeneath, PathChanged, PathRefused, type AnchoredPath } from '../../sys/beneath.js';
import type { MountEntry } from '../../sys/mounts.js';
import type { DriverContext } from '../context/context.js';
import { aborted, CsiError, failedPrecondition, invalidArgument, notFound } from '../rpc/errors.js';
import { printable } from '../rpc/printable.js';
import { isInside, requireTargetPath } from '../request/validate.js';

interface Root {
  /** As configured, for the lexical check of a caller's path. */
  given: string;
  /** With symlinks resolved: where the walk starts. */
  real: string;
}

function realOrSelf(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

/** The driver context plus the checks every Node call makes. */
export class NodeKit {
  readonly catalog: VolumeCatalog;

  constructor(readonly ctx: DriverContext) {
    this.catalog = ctx.catalog;
  }

  /** Target roots and pool directories with symlinks resolved, read once: they are the operator's, not the caller's. */
  private realRoots: Root[] | undefined;
  private realPools: string[] | undefined;

  private roots(): Root[] {
    if (this.realRoots) return this.realRoots;
    const roots = this.ctx.targetRoots().map((given) => ({ given, real: realOrSelf(given) }));
    // A root that does not exist yet (kubelet not started) is looked at again next time.
    if (roots.every((r) => existsSync(r.real))) this.realRoots = roots;
    return roots;
  }

  private pools(): string[] {
    this.realPools ??= this.catalog.poolDirs().map(realOrSelf);
    return this.realPools;
  }

  /** The root a real path lies in and the components below it. */
  private split(p: string): { root: string; rel: string[] } | undefined {
    for (const r of this.roots()) {
      for (const base of [r.given, r.real]) {
        if (isInside(p, base)) return { root: r.real, rel: path.relative(base, p).split('/') };
      }
    }
    return undefined;
  }

  private walk(p: string, field: string, create: boolean): AnchoredPath {
    const normal = requireTargetPath(p, field, this.roots().flatMap((r) => [r.given, r.real]), this.pools());
    const where = this.split(normal);
    if (where === undefined) throw invalidArgument(`${field} "${printable(p)}" is outside the allowed target roots`);
    let anchored: AnchoredPath;
    try {
      anchored = openBeneath(where.root, where.rel, create);
    } catch (err) {
      if (err instanceof PathRefused) throw invalidArgument(`${field} "${printable(p)}": ${err.message}`);
      // Still the lost race it was (errors.ts maps it), with the field it happened to.
      if (err instanceof PathChanged) throw new PathChanged(`${field} "${printable(p)}": ${err.message}`);
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') throw failedPrecondition(`${field} "${printable(p)}": ${(err as Error).message}`);
      throw err;
    }
    if (this.pools().some((dir) => anchored.path === dir || isInside(anchored.path, dir) || isInside(dir, anchored.path))) {
      anchored.close();
      throw invalidArgument(`${field} "${printable(p)}" leads into a storage pool directory`);
    }
    return anchored;
  }

  /**
   * A stage or publish path checked and resolved beneath its target root (symlinks followed
   * only while they stay inside it), without creating anything: the real path, which records,
   * locks and the mount table all use.
   */
  resolve(p: string, field: string): string {
    const anchored = this.walk(p, field, false);
    anchored.close();
    return anchored.path;
  }

  /**
   * Opens the real path `real` (from resolve) for use, making missing directories on the way
   * when `create`. Called under the path's lock: if a link was swapped in since resolve, the
   * path now leads elsewhere and the call is refused, to be retried.
   */
  open(real: string, field: string, create: boolean): AnchoredPath {
    const anchored = this.walk(real, field, create);
    if (anchored.path !== real) {
      anchored.close();
      throw aborted(`${field} changed while it was being resolved (now ${printable(anchored.path)}); retry`);
    }
    return anchored;
  }

  /** Runs `fn` holding the volume's lock and the locks of the paths: one volume per path at a time. */
  withLocks<T>(id: string, paths: readonly string[], fn: () => Promise<T>): Promise<T> {
    return this.ctx.locks.with([id, ...paths.map((p) => `path:${p}`)], fn);
  }

  /**
   * Mounting at `p` must neither hide the mounts below it (another volume's staging mount or
   * publication) nor land inside a Lode volume (the mkdir and the mount would write into that
   * volume's filesystem and pin it).
   */
  async refuseNesting(p: string, mounts: readonly MountEntry[]): Promise<void> {
    for (const e of mounts) {
      if (isInside(e.mountPoint, p)) throw failedPrecondition(`${e.mountPoint} is mounted below ${p}; mounting there would hide it`);
      if (isInside(p, e.mountPoint) && (await this.isLodeVolume(e))) {
        throw failedPrecondition(`${p} lies inside ${e.mountPoint}, a Lode volume; mounting there would write into it`);
      }
    }
  }

  /** Whether a mount's source is the storage of a volume in one of this node's pools (each backend knows its own). */
  private async isLodeVolume(mount: MountEntry): Promise<boolean> {
    for (const name of this.catalog.poolNames()) if (await this.catalog.pool(name).holdsMount(mount)) return true;
    return false;
  }

  /** A ready volume of this node, or NOT_FOUND. */
  volume(id: string): VolumeRecord {
    const r = this.catalog.get(id);
    if (!r || r.state !== 'ready') throw notFound(`volume ${id} does not exist on node ${this.ctx.config.nodeId}`);
    return r;
  }

  /** The real path of `p` if it is where the volume is staged or published, else NOT_FOUND. */
  requirePathOf(r: VolumeRecord, p: string, field: string): string {
    let real: string | undefined;
    try {
      real = this.resolve(p, field);
    } catch (err) {
      // A path that cannot be one of ours (relative, outside the roots, a bad link) is, for a
      // question about where the volume is, simply not where it is.
      if (!(err instanceof CsiError && err.code === status.INVALID_ARGUMENT)) throw err;
    }
    if (real === undefined || !volumePaths(r).includes(real)) throw notFound(`volume ${r.id} is not staged or published at "${printable(p)}"`);
    return real;
  }
}
