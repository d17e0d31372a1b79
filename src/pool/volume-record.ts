// What Lode stores about each volume, beside its data in the pool; the pool is the source of truth.
import { isSupportedFsType, type FsType } from '../sys/filesystem.js';

/**
 * The record format this driver writes. The compatibility rule (also in docs/operations.md):
 * - A driver reads every format version from 1 up to its own. Older records are brought up to
 *   date in memory by UPGRADES and written at the current version when they next change.
 * - A driver never guesses at a version above its own (a rollback after a format change): the
 *   volume is quarantined, served to nobody and deleted by nobody, until a driver that knows
 *   the version runs again or an operator rewrites the record.
 * - The version goes up only when an older driver would misread a record (a field that changes
 *   meaning, a new field it must not ignore). A new optional field an older driver can safely
 *   ignore does not bump it: an older driver writes back the object it read, unknown fields
 *   included.
 * - Reading a version, once released, is never dropped.
 */
export const RECORD_VERSION = 1;

/** Steps bringing a record of version n to n + 1, keyed by n. Empty while 1 is the only format. */
const UPGRADES: ReadonlyMap<number, (old: Record<string, unknown>) => Record<string, unknown>> = new Map();

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
  /** Format version of this record; see RECORD_VERSION for the compatibility rule. */
  version: typeof RECORD_VERSION;
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
  /**
   * What the backend chose for the volume before making its storage (a quota project id),
   * written durably with the creating record; the core never reads it. An older driver that
   * does not know it keeps it (it writes back the object it read).
   */
  backing?: Record<string, string | number>;
  /** Where the volume's data came from (a restore or a clone), as CreateVolume named it. */
  contentSource?: { snapshot: string } | { volume: string };
  /**
   * A clone's source staging path whose filesystem is frozen for the copy: written before the
   * freeze, so a crash while frozen is thawed when the next start rolls the create back.
   */
  frozen?: string;
}

function isStringMap(v: unknown): v is Record<string, string> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every((x) => typeof x === 'string');
}

function isBackingMap(v: unknown): v is Record<string, string | number> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
    && Object.values(v).every((x) => typeof x === 'string' || (typeof x === 'number' && Number.isSafeInteger(x)));
}

function isContentSource(v: unknown): v is VolumeRecord['contentSource'] {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const keys = Object.keys(v);
  const value = Object.values(v)[0];
  return keys.length === 1 && (keys[0] === 'snapshot' || keys[0] === 'volume') && typeof value === 'string';
}

function isPublication(v: unknown): v is Publication {
  if (typeof v !== 'object' || v === null) return false;
  const p = v as Partial<Publication>;
  return typeof p.targetPath === 'string' && typeof p.readOnly === 'boolean' && (p.device === undefined || typeof p.device === 'string');
}

/**
 * Checks a current-format record read back from disk; returns a reason when it is not one Lode
 * wrote. Every field the driver acts on is checked: a missing `formatted` read as false would
 * format the volume again.
 */
export function checkRecord(v: unknown): string | undefined {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return 'not an object';
  const r = v as Partial<VolumeRecord>;
  if (r.version !== RECORD_VERSION) return `unknown version ${String(r.version)}`;
  if (typeof r.id !== 'string' || typeof r.name !== 'string' || typeof r.pool !== 'string') return 'missing id, name or pool';
  if (typeof r.capacityBytes !== 'number' || !Number.isSafeInteger(r.capacityBytes) || r.capacityBytes <= 0) return 'bad capacityBytes';
  if (r.state !== 'creating' && r.state !== 'ready' && r.state !== 'deleting') return `bad state ${String(r.state)}`;
  if (r.accessType !== 'mount' && r.accessType !== 'block') return 'bad accessType';
  if (r.fsType !== '' && !isSupportedFsType(String(r.fsType))) return `bad fsType ${String(r.fsType)}`;
  if (typeof r.formatted !== 'boolean') return 'bad formatted';
  if (r.filesystemBytes !== undefined && (!Number.isSafeInteger(r.filesystemBytes) || r.filesystemBytes <= 0)) return 'bad filesystemBytes';
  if (!isStringMap(r.parameters)) return 'bad parameters';
  if (typeof r.ephemeral !== 'boolean' || typeof r.createdAt !== 'string') return 'bad ephemeral or createdAt';
  if (r.staging !== null && typeof r.staging !== 'string') return 'bad staging';
  if (!Array.isArray(r.stagingFlags) || !r.stagingFlags.every((f) => typeof f === 'string')) return 'bad stagingFlags';
  if (!Array.isArray(r.publications) || !r.publications.every(isPublication)) return 'bad publications';
  if (r.backing !== undefined && !isBackingMap(r.backing)) return 'bad backing';
  if (r.contentSource !== undefined && !isContentSource(r.contentSource)) return 'bad contentSource';
  if (r.frozen !== undefined && typeof r.frozen !== 'string') return 'bad frozen';
  return undefined;
}

/** A record as read from its file: usable, or why not (and whether a newer driver wrote it). */
export type RecordReading =
  | { record: VolumeRecord }
  | { problem: string; newer: boolean };

/**
 * Turns the parsed content of `<id>.json` into a record of the current format, upgrading an
 * older one, or says why it cannot be used. Never throws.
 */
export function readRecord(parsed: unknown, id: string): RecordReading {
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return { problem: 'not a JSON object', newer: false };
  let v = parsed as Record<string, unknown>;
  const version = v['version'];
  if (typeof version !== 'number' || !Number.isSafeInteger(version) || version < 1) {
    return { problem: `no valid format version (found ${(JSON.stringify(version) ?? 'none').slice(0, 32)})`, newer: false };
  }
  if (version > RECORD_VERSION) {
    return { problem: `format version ${version} is newer than this driver's ${RECORD_VERSION}`, newer: true };
  }
  for (let n = version; n < RECORD_VERSION; n++) {
    const step = UPGRADES.get(n);
    if (step === undefined) return { problem: `no upgrade from format version ${n}`, newer: false };
    v = { ...step(v), version: n + 1 };
  }
  const problem = checkRecord(v);
  if (problem !== undefined) return { problem, newer: false };
  const record = v as unknown as VolumeRecord;
  if (record.id !== id) return { problem: `its id ${JSON.stringify(record.id.slice(0, 64))} does not match its file name`, newer: false };
  return { record };
}

/** Every path the volume is staged or published at, publications first. */
export function volumePaths(r: VolumeRecord): string[] {
  return [...r.publications.map((p) => p.targetPath), ...(r.staging ? [r.staging] : [])];
}

/** What a caller decides about a new volume; the rest of its record starts the same for every volume. */
export type NewVolume = Pick<VolumeRecord, 'id' | 'name' | 'pool' | 'capacityBytes' | 'accessType' | 'fsType' | 'parameters' | 'ephemeral'>
  & Partial<Pick<VolumeRecord, 'stagingFlags' | 'publications' | 'formatted' | 'filesystemBytes' | 'contentSource'>>;

/**
 * A record for a volume about to be made: not yet staged or (unless given) published, and not
 * formatted unless it comes with its filesystem (a directory pool's volume).
 */
export function newVolumeRecord(v: NewVolume): VolumeRecord {
  return {
    version: RECORD_VERSION, state: 'creating', formatted: false, createdAt: new Date().toISOString(), staging: null,
    stagingFlags: [], publications: [], ...v, parameters: { ...v.parameters },
  };
}
