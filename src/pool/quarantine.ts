// Volumes Lode cannot account for: found on disk at start-up or in the way of a create, never served, never changed, never deleted.

/**
 * Why a volume is quarantined: its record is damaged or not Lode's, its record comes from a
 * newer driver (a rollback), or its storage has no record file at all.
 */
export type QuarantineCause = 'unreadable-record' | 'newer-version' | 'no-record';

export interface QuarantinedVolume {
  id: string;
  pool: string;
  cause: QuarantineCause;
  /** What is wrong, in words, for the log and /healthz. */
  problem: string;
  /** The record file, when there is one. */
  recordFile?: string;
  /** Where its storage is (an image file, a directory...), when there is any. */
  storage?: string;
  /** Bytes the storage takes; they stay counted as allocated in the pool. */
  storageBytes: number;
}

/** One line for an operator: which volume, where its files are, and why it is held. */
export function describeQuarantine(q: QuarantinedVolume): string {
  const files = [q.recordFile, q.storage].filter((f): f is string => f !== undefined).join(', ');
  return `volume ${q.id} in pool ${q.pool} is quarantined (${q.cause}: ${q.problem}); files: ${files}`;
}

/** Raised by any call on a quarantined volume's id: nothing may read, reuse or delete it. */
export class VolumeQuarantinedError extends Error {
  constructor(readonly volume: QuarantinedVolume) {
    super(`${describeQuarantine(volume)}; Lode neither serves nor deletes it until its record is repaired or removed by hand (see docs/operations.md, "Quarantined volumes")`);
    this.name = 'VolumeQuarantinedError';
  }
}
