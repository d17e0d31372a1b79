// What Lode stores about each volume, beside its data in the pool; the pool is the source of truth.
import type { FsType } from '../sys/filesystem.js';

/** creating: space reserved, backing storage maybe partial; ready: usable; deleting: on its way out. */
export type VolumeState = 'creating' | 'ready' | 'deleting';

export type AccessType = 'mount' | 'block';

/** Where a volume is published, so teardown and DeleteVolume know what still holds it. */
export interface Publication {
  targetPath: string;
  readOnly: boolean;
  /** The device a read-only raw block publication uses (its own read-only loop device). */
  device?: string;
}

export interface VolumeRecord {
  /** Format version of this record, for future migrations. */
  version: 1;
  id: string;
  /** The CreateVolume name (for inline ephemeral volumes: the id kubelet chose). */
  name: string;
  pool: string;
  capacityBytes: number;
  state: VolumeState;
  accessType: AccessType;
  /** Filesystem to create, or that was created, on a mount volume; "" for block. */
  fsType: FsType | '';
  /** True once mkfs succeeded: the volume is never formatted again. */
  formatted: boolean;
  /** Size the filesystem was made or last grown to; below capacityBytes it still has to grow. */
  filesystemBytes?: number;
  /** CreateVolume parameters as the caller sent them, returned again for idempotency checks. */
  parameters: Record<string, string>;
  ephemeral: boolean;
  createdAt: string;
  /** Staging path while staged. */
  staging: string | null;
  /** Mount flags used at stage time, so a second stage with other flags is told apart. */
  stagingFlags: string[];
  publications: Publication[];
}

function isStringMap(v: unknown): v is Record<string, string> {
  return typeof v === 'object' && v !== null && Object.values(v).every((x) => typeof x === 'string');
}

/** Checks a record read back from disk; returns a reason when it is not one Lode wrote. */
export function checkRecord(v: unknown): string | undefined {
  if (typeof v !== 'object' || v === null) return 'not an object';
  const r = v as Partial<VolumeRecord>;
  if (r.version !== 1) return `unknown version ${String(r.version)}`;
  if (typeof r.id !== 'string' || typeof r.name !== 'string' || typeof r.pool !== 'string') return 'missing id, name or pool';
  if (typeof r.capacityBytes !== 'number' || !Number.isSafeInteger(r.capacityBytes) || r.capacityBytes <= 0) return 'bad capacityBytes';
  if (r.state !== 'creating' && r.state !== 'ready' && r.state !== 'deleting') return `bad state ${String(r.state)}`;
  if (r.accessType !== 'mount' && r.accessType !== 'block') return 'bad accessType';
  if (!isStringMap(r.parameters)) return 'bad parameters';
  if (!Array.isArray(r.publications) || !Array.isArray(r.stagingFlags)) return 'bad publications';
  return undefined;
}

/** Every path the volume is staged or published at, publications first. */
export function volumePaths(r: VolumeRecord): string[] {
  return [...r.publications.map((p) => p.targetPath), ...(r.staging ? [r.staging] : [])];
}

/** What a caller decides about a new volume; the rest of its record starts the same for every volume. */
export type NewVolume = Pick<VolumeRecord, 'id' | 'name' | 'pool' | 'capacityBytes' | 'accessType' | 'fsType' | 'parameters' | 'ephemeral'>
  & Partial<Pick<VolumeRecord, 'stagingFlags' | 'publications'>>;

/** A record for a volume about to be made: not yet formatted, staged or (unless given) published. */
export function newVolumeRecord(v: NewVolume): VolumeRecord {
  return {
    version: 1, state: 'creating', formatted: false, createdAt: new Date().toISOString(), staging: null,
    stagingFlags: [], publications: [], ...v, parameters: { ...v.parameters },
  };
}
