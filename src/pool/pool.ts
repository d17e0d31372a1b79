// The configuration of one pool: its backend, where it lives, and its limits.
import * as path from 'node:path';

/** Every backend Lode has, by the name a pool specification gives it (the registry builds each). */
export const BACKEND_NAMES = ['loop', 'dir', 'lvm'] as const;
export type BackendName = (typeof BACKEND_NAMES)[number];

export function isBackendName(value: string): value is BackendName {
  return (BACKEND_NAMES as readonly string[]).includes(value);
}

export interface PoolConfig {
  name: string;
  backend: BackendName;
  dir: string;
  /** Bytes the pool may hand out; undefined = what the directory's filesystem can hold. */
  sizeBytes?: number;
  /** Size of a volume created without a capacity request. */
  defaultVolumeBytes: number;
  /** Largest single volume; undefined = no limit but the free space. */
  maxVolumeBytes?: number;
  /**
   * What an unsized pool leaves free on its filesystem, whoever else writes there: a share of
   * the filesystem's size or a byte count. undefined = none.
   */
  reserve?: PoolReserve;
  /** Largest inline ephemeral volume; undefined = the pool makes none (they bypass scheduling and quota). */
  inlineMaxBytes?: number;
  /** Loop devices read and write their images with direct I/O (the default; direct-io=off turns it off). */
  directIo: boolean;
  /** Where an lvm pool makes its volumes; set exactly when backend is lvm. */
  lvm?: LvmPoolConfig;
}

/** An lvm pool's volume group, and its thin pool when volumes are thin. */
export interface LvmPoolConfig {
  vg: string;
  /** Thin volumes in this thin pool of `vg`; undefined = linear (thick) volumes in `vg`. */
  thinPool?: string;
  /** Thin only: the virtual sizes of all thin volumes may add up to this many times the thin pool's size. */
  overprovision: number;
  /** Thin only: a volume turns abnormal when its thin pool's data or metadata is this full, in percent. */
  alertPercent: number;
  /**
   * Thick only: the copy-on-write area of each snapshot, a share of its origin's size or a
   * fixed size; undefined = a thick pool refuses snapshots (thin snapshots need no area).
   */
  snapshotSize?: PoolReserve;
}

export type PoolReserve = { percent: number } | { bytes: number };

/** Bytes of a filesystem of `totalBytes` that an unsized pool leaves to everything else on it (its reserve=). */
export function reserveBytes(config: Pick<PoolConfig, 'reserve'>, totalBytes: number): number {
  const r = config.reserve;
  if (r === undefined) return 0;
  return 'percent' in r ? Math.ceil((totalBytes * r.percent) / 100) : r.bytes;
}

/**
 * Where the volume core keeps the pool's records: a folder of its own, apart from whatever
 * layout the backend gives its storage, so a backend with no directory (LVM) keeps its
 * records the same way. For a pool with a directory it is `<dir>/volumes`, where every
 * released version has kept them.
 */
export function recordsDir(config: Pick<PoolConfig, 'dir'>): string {
  return path.join(config.dir, 'volumes');
}

/** Where the volume core keeps the pool's snapshot records: a folder apart, so no backend mistakes them for volumes. */
export function snapshotsDir(config: Pick<PoolConfig, 'dir'>): string {
  return path.join(config.dir, 'snapshots');
}
