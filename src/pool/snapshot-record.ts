// What Lode stores about each snapshot, beside its data in the pool: enough to restore it, account for it and finish or undo it after a crash.
import { isSupportedFsType, type FsType } from '../sys/filesystem.js';
import type { AccessType } from './volume-record.js';

/** Snapshot records follow the volume records' compatibility rule (see RECORD_VERSION), with their own version. */
export const SNAPSHOT_RECORD_VERSION = 1;

/** creating: space reserved, storage maybe partial; ready: usable; deleting: on its way out. */
export type SnapshotState = 'creating' | 'ready' | 'deleting';

export interface SnapshotRecord {
  version: typeof SNAPSHOT_RECORD_VERSION;
  id: string;
  /** The CreateSnapshot name, its idempotency token. */
  name: string;
  pool: string;
  sourceVolumeId: string;
  /** The source's size when it was taken: the smallest volume it restores into. */
  sizeBytes: number;
  /** Bytes the snapshot holds from the pool (the ledger's share): reserved before it is made, what it takes once made. */
  chargedBytes: number;
  /** The source's access type and filesystem, which a restore gets with the data. */
  accessType: AccessType;
  fsType: FsType | '';
  /** Whether the source had its filesystem yet: a restore of an unformatted volume is formatted at its first stage. */
  formatted: boolean;
  /** The size the source's filesystem had, so a larger restore grows it. */
  filesystemBytes?: number;
  state: SnapshotState;
  /** When the data was cut, ISO 8601 with nanoseconds as CSI carries them. */
  createdAt: string;
  createdNanos: number;
  /**
   * A staging path whose filesystem was frozen for the copy: written before the freeze, so a
   * crash while frozen is thawed at the next start (a frozen filesystem hangs its pod).
   */
  frozen?: string;
  /** What the backend chose for the snapshot's storage; the core never reads it. */
  backing?: Record<string, string | number>;
}

function isBackingMap(v: unknown): v is Record<string, string | number> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
    && Object.values(v).every((x) => typeof x === 'string' || (typeof x === 'number' && Number.isSafeInteger(x)));
}

const positive = (n: unknown): boolean => typeof n === 'number' && Number.isSafeInteger(n) && n > 0;

/** Checks a record read back from disk; a reason when it is not one Lode wrote. */
function checkSnapshotRecord(v: Record<string, unknown>, id: string): string | undefined {
  const r = v as Partial<SnapshotRecord>;
  if (typeof r.id !== 'string' || typeof r.name !== 'string' || typeof r.pool !== 'string' || typeof r.sourceVolumeId !== 'string') {
    return 'missing id, name, pool or sourceVolumeId';
  }
  if (r.id !== id) return `its id ${JSON.stringify(r.id.slice(0, 64))} does not match its file name`;
  if (!positive(r.sizeBytes)) return 'bad sizeBytes';
  if (typeof r.chargedBytes !== 'number' || !Number.isSafeInteger(r.chargedBytes) || r.chargedBytes < 0) return 'bad chargedBytes';
  if (r.accessType !== 'mount' && r.accessType !== 'block') return 'bad accessType';
  if (r.fsType !== '' && !isSupportedFsType(String(r.fsType))) return `bad fsType ${String(r.fsType)}`;
  if (typeof r.formatted !== 'boolean') return 'bad formatted';
  if (r.filesystemBytes !== undefined && !positive(r.filesystemBytes)) return 'bad filesystemBytes';
  if (r.state !== 'creating' && r.state !== 'ready' && r.state !== 'deleting') return `bad state ${String(r.state)}`;
  if (typeof r.createdAt !== 'string' || typeof r.createdNanos !== 'number' || !Number.isSafeInteger(r.createdNanos)) return 'bad createdAt';
  if (r.frozen !== undefined && typeof r.frozen !== 'string') return 'bad frozen';
  if (r.backing !== undefined && !isBackingMap(r.backing)) return 'bad backing';
  return undefined;
}

/** A snapshot record as read from its file: usable, or why not (and whether a newer driver wrote it). */
export type SnapshotReading = { record: SnapshotRecord } | { problem: string; newer: boolean };

/** Turns the parsed content of `<id>.json` into a snapshot record, or says why it cannot be used. Never throws. */
export function readSnapshotRecord(parsed: unknown, id: string): SnapshotReading {
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return { problem: 'not a JSON object', newer: false };
  const v = parsed as Record<string, unknown>;
  const version = v['version'];
  if (typeof version !== 'number' || !Number.isSafeInteger(version) || version < 1) return { problem: 'no valid format version', newer: false };
  if (version > SNAPSHOT_RECORD_VERSION) {
    return { problem: `format version ${version} is newer than this driver's ${SNAPSHOT_RECORD_VERSION}`, newer: true };
  }
  const problem = checkSnapshotRecord(v, id);
  return problem === undefined ? { record: v as unknown as SnapshotRecord } : { problem, newer: false };
}

/** Nanoseconds since the epoch, as precise as the clock gives them, for CSI's creation_time. */
export function nowWithNanos(): { createdAt: string; createdNanos: number } {
  const ms = Date.now();
  const nanos = Number(process.hrtime.bigint() % 1_000_000n) + (ms % 1000) * 1_000_000;
  return { createdAt: new Date(ms).toISOString(), createdNanos: nanos };
}
