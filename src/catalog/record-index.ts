// The volume and snapshot records of this node's pools and the quarantined ids, in memory: found by id and listed in id order, no I/O.
import { VolumeQuarantinedError, type QuarantinedVolume } from '../pool/quarantine.js';
import type { SnapshotRecord } from '../pool/snapshot-record.js';
import type { VolumeRecord } from '../pool/volume-record.js';

export class RecordIndex {
  private readonly volumes = new Map<string, VolumeRecord>();
  private readonly snapshots = new Map<string, SnapshotRecord>();
  /**
   * Found at start-up, or in the way of a create later; never dropped for the life of the
   * process (a repair takes a restart).
   */
  private readonly quarantineList: QuarantinedVolume[] = [];
  /** The same by id (the first one found, should two pools hold one id), for the refusals. */
  private readonly quarantineById = new Map<string, QuarantinedVolume>();
  /** Sorted ids, rebuilt lazily: ListVolumes pages over a stable order. */
  private sortedIds: string[] | undefined;
  private sortedSnapshotIds: string[] | undefined;

  addVolume(r: VolumeRecord): void {
    this.volumes.set(r.id, r);
    this.sortedIds = undefined;
  }

  /** Forgets the volume when `r` is the record indexed under its id; false when it is not (already gone, or another). */
  dropVolume(r: VolumeRecord): boolean {
    if (this.volumes.get(r.id) !== r) return false;
    this.volumes.delete(r.id);
    this.sortedIds = undefined;
    return true;
  }

  addSnapshot(r: SnapshotRecord): void {
    this.snapshots.set(r.id, r);
    this.sortedSnapshotIds = undefined;
  }

  /** As dropVolume, for a snapshot. */
  dropSnapshot(r: SnapshotRecord): boolean {
    if (this.snapshots.get(r.id) !== r) return false;
    this.snapshots.delete(r.id);
    this.sortedSnapshotIds = undefined;
    return true;
  }

  /** The volumes and snapshots of one pool, for its backend's start-up check. */
  volumesIn(pool: string): VolumeRecord[] {
    return [...this.volumes.values()].filter((r) => r.pool === pool);
  }

  snapshotsIn(pool: string): SnapshotRecord[] {
    return [...this.snapshots.values()].filter((r) => r.pool === pool);
  }

  quarantine(q: QuarantinedVolume): void {
    this.quarantineList.push(q);
    if (!this.quarantineById.has(q.id)) this.quarantineById.set(q.id, q);
  }

  /** The quarantine of this id, or undefined when it is not quarantined. */
  quarantinedAs(id: string): QuarantinedVolume | undefined {
    return this.quarantineById.get(id);
  }

  /**
   * The volume's record, or undefined when there is none. Throws VolumeQuarantinedError for a
   * quarantined id, so that no call (a create of the same name, a delete, a stage) can act on
   * a volume Lode cannot account for.
   */
  get(id: string): VolumeRecord | undefined {
    const q = this.quarantineById.get(id);
    if (q !== undefined) throw new VolumeQuarantinedError(q);
    return this.volumes.get(id);
  }

  /** Every quarantined volume, by pool and id. */
  quarantined(): QuarantinedVolume[] {
    return [...this.quarantineList].sort((a, b) => a.pool.localeCompare(b.pool) || a.id.localeCompare(b.id));
  }

  /** The snapshot's record, or undefined; throws VolumeQuarantinedError for a quarantined id (an unusable snapshot record). */
  getSnapshot(id: string): SnapshotRecord | undefined {
    const q = this.quarantineById.get(id);
    if (q !== undefined) throw new VolumeQuarantinedError(q);
    return this.snapshots.get(id);
  }

  /** All snapshots ordered by id. */
  listSnapshots(): SnapshotRecord[] {
    if (!this.sortedSnapshotIds) this.sortedSnapshotIds = [...this.snapshots.keys()].sort();
    return this.sortedSnapshotIds.map((id) => this.snapshots.get(id)).filter((r): r is SnapshotRecord => r !== undefined);
  }

  /** The snapshots taken of a volume (still present). */
  snapshotsOf(volumeId: string): SnapshotRecord[] {
    return this.listSnapshots().filter((s) => s.sourceVolumeId === volumeId);
  }

  /** All volumes ordered by id. */
  list(): VolumeRecord[] {
    if (!this.sortedIds) this.sortedIds = [...this.volumes.keys()].sort();
    return this.sortedIds.map((id) => this.volumes.get(id)).filter((r): r is VolumeRecord => r !== undefined);
  }
}
