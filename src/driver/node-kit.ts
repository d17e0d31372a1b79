// What the Node service's calls share: target paths resolved beneath their root, locks on volume and path, mount ownership, nesting and option checks.
import { existsSync, realpathSync } from 'node:fs';
import * as path from 'node:path';
import { status } from '@grpc/grpc-js';
import type { Backend as Pool, BlockBackend } from '../pool/backend.js';
import type { VolumeCatalog } from '../pool/volume-catalog.js';
import { volumePaths, type VolumeRecord } from '../pool/volume-record.js';
import { deviceNumber } from '../sys/device-id.js';
import { openBeneath, PathRefused, type AnchoredPath } from '../sys/beneath.js';
import { ExecError } from '../sys/exec.js';
import { findMount, mountDevice, unmountRef, type MountEntry } from '../sys/mounts.js';
import { outsideCall } from '../util/call-signal.js';
import type { DriverContext } from './context.js';
import { aborted, CsiError, failedPrecondition, internal, invalidArgument, notFound } from './errors.js';
import { isInside, printable, requireTargetPath } from './validate.js';

export function blockOf(b: Pool): BlockBackend {
  if (b.kind !== 'block') throw new Error(`pool ${b.config.name} is not a block backend`);
  return b;
}

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
    mountDevice(device, ref, fsType, mountOptions(readOnly, flags))));
  if (readOnly) await ensureReadOnly(entry);
}

/** Fails, and takes the mount down again, when a mount that must be read-only is not. */
export async function ensureReadOnly(anchored: AnchoredPath): Promise<void> {
  const m = await findMount(anchored.path);
  if (m && readOnlyMount(m)) return;
  if (m) await outsideCall(() => unmountRef(anchored.ref)).catch(() => undefined);
  throw internal(`the mount at ${anchored.path} came out writable although read-only was asked; it was taken down`);
}

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

  /** The block backend of a pool (temporary: until the node side knows directory backends). */
  blockPool(name: string): BlockBackend {
    return blockOf(this.catalog.pool(name));
  }

  /** A ready volume of this node, or NOT_FOUND. */
  volume(id: string): VolumeRecord {
    const r = this.catalog.get(id);
    if (!r || r.state !== 'ready') throw notFound(`volume ${id} does not exist on node ${this.ctx.config.nodeId}`);
    return r;
  }

  /** True when the mount at a target is this volume's: same filesystem, or a bind of one of its devices. */
  async belongsTo(m: MountEntry, r: VolumeRecord, pool: BlockBackend): Promise<boolean> {
    const devices = [await pool.device(r), ...r.publications.map((p) => p.device)].filter((d): d is string => d !== undefined);
    for (const d of devices) {
      if (m.devId === (await deviceNumber(d))) return true;
      if (m.root === '/' + path.basename(d)) return true;
    }
    return false;
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
