// What the `dir` backend needs from a filesystem's way of copying a volume's tree (a btrfs snapshot, a reflink or full copy).
import type { VolumeRecord } from '../../pool/volume-record.js';

/**
 * One filesystem's way of taking and restoring snapshots of volume directories. Every method
 * replaces whatever an interrupted attempt left at its target (a record proves the target is
 * Lode's: the core found nothing there before writing it), so each is idempotent after a crash
 * at any point; what no attempt of its own leaves (a file where a directory goes) is refused
 * with StorageOccupiedError, never removed.
 */
export interface SnapshotMethod {
  /** What a snapshot's record says it is, for a restart and for logs. */
  readonly kind: 'btrfs-snapshot' | 'reflink' | 'copy';
  /** In a few words, for logs and the docs. */
  readonly description: string;
  /** Whether a copy is a point in time by itself (see SnapshotSupport.consistentCopy). */
  readonly consistent: boolean;
  /** Makes `to` (in the snapshots folder) a snapshot of the volume directory `from`; returns the bytes it holds from the pool. */
  take(from: string, to: string): Promise<number>;
  /** Removes the snapshot at `dir`; nothing there is not an error. */
  remove(dir: string): Promise<void>;
  /** Why the snapshot at `dir` is unusable, or undefined. */
  problem(dir: string): Promise<string | undefined>;
  /** Makes the volume directory `to`, held to `target.capacityBytes`, holding what `from` (a snapshot or a volume directory) holds. */
  fill(from: string, to: string, target: VolumeRecord): Promise<void>;
  /** What a snapshot directory found with no record holds (read only). */
  bytes(dir: string): Promise<number>;
}
