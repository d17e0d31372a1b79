// Snapshots, restores and clones of quota directories: btrfs subvolume snapshots, or copies of the tree on XFS and ext4, each snapshot a directory of the pool's snapshots folder.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { Occupant, SnapshotSupport, UnrecordedStorage, VolumeSource } from '../../pool/backend.js';
import { StorageOccupiedError } from '../../pool/occupied.js';
import { snapshotsDir, type PoolConfig } from '../../pool/pool.js';
import type { SnapshotRecord } from '../../pool/snapshot-record.js';
import type { VolumeRecord } from '../../pool/volume-record.js';
import { reflinkSupported } from '../../sys/file-copy.js';
import { entryAt, kindOf } from '../../sys/entry-at.js';
import { BtrfsQgroupMethod } from './btrfs-qgroup-method.js';
import { BtrfsSnapshotMethod } from './btrfs-snapshot-method.js';
import type { QuotaMethod } from './quota-method.js';
import type { SnapshotMethod } from './snapshot-method.js';
import { TreeCopyMethod } from './tree-copy-method.js';

/** What the snapshots need of the dir backend. */
export interface DirVolumes {
  readonly config: PoolConfig;
  directory(record: Pick<VolumeRecord, 'id'>): string;
  /** The filesystem's quota mechanism, found on first use. */
  quotaMethod(): Promise<QuotaMethod>;
  /** A volume's directory is about to be made: counted at its whole limit until a refresh reads its use. */
  noteVolume(record: VolumeRecord): void;
  /** The directory was refused before it was made (StorageOccupiedError): no longer counted. */
  forgetVolume(record: VolumeRecord): void;
}

/** The way `quota`'s filesystem snapshots; `reflink` says whether XFS shares blocks (only asked once the pool is open). */
function methodFor(quota: QuotaMethod, reflink: boolean): SnapshotMethod {
  if (quota instanceof BtrfsQgroupMethod) return new BtrfsSnapshotMethod(quota);
  return new TreeCopyMethod(reflink ? 'reflink' : 'copy', quota);
}

/**
 * Each snapshot is `<pool>/snapshots/<id>`, beside its record `<id>.json`. Removal needs no
 * more than the record (a crashed snapshot is rolled back before the pool is opened); taking
 * and restoring use what open learnt of the filesystem.
 */
export class DirSnapshots implements SnapshotSupport {
  readonly independentSnapshots = true;
  private chosen: SnapshotMethod | undefined;

  constructor(private readonly volumes: DirVolumes) {}

  private get dir(): string {
    return snapshotsDir(this.volumes.config);
  }

  snapshotPath(snapshot: Pick<SnapshotRecord, 'id'>): string {
    return path.join(this.dir, snapshot.id);
  }

  /** The method open chose, or (before open, for a removal) the filesystem's with a full copy. */
  private async snapshotMethod(): Promise<SnapshotMethod> {
    return this.chosen ?? methodFor(await this.volumes.quotaMethod(), false);
  }

  /**
   * Learns how the filesystem copies, and reports every snapshot directory with no record
   * (never removing one: no step of Lode's leaves one, so it is not provably Lode's).
   */
  async open(snapshots: SnapshotRecord[]): Promise<UnrecordedStorage[]> {
    await fs.mkdir(this.dir, { recursive: true, mode: 0o700 });
    const quota = await this.volumes.quotaMethod();
    const method = methodFor(quota, !(quota instanceof BtrfsQgroupMethod) && (await reflinkSupported(this.dir)));
    const recorded = new Set(snapshots.map((s) => s.id));
    const unrecorded: UnrecordedStorage[] = [];
    for (const entry of await fs.readdir(this.dir, { withFileTypes: true })) {
      // Records and their temp files are the core's; only directories are snapshots.
      if (!entry.isDirectory() || recorded.has(entry.name)) continue;
      const location = path.join(this.dir, entry.name);
      unrecorded.push({ id: entry.name, location, bytes: await method.bytes(location) });
    }
    this.chosen = method;
    return unrecorded;
  }

  /** A directory of the snapshot's name is what open reports without a record; anything else there is only in the way. */
  async snapshotOccupant(snapshot: SnapshotRecord): Promise<Occupant | undefined> {
    const location = this.snapshotPath(snapshot);
    const st = await entryAt(location);
    if (st === undefined) return undefined;
    if (!st.isDirectory()) return { kind: 'foreign', location, what: `is ${kindOf(st)}, not a snapshot directory` };
    return { kind: 'unrecorded', storage: { id: snapshot.id, location, bytes: await (await this.snapshotMethod()).bytes(location) } };
  }

  method(): string {
    return this.chosen?.description ?? 'not known until the pool is open';
  }

  consistentCopy(): boolean {
    return this.chosen?.consistent ?? false;
  }

  /** The most a snapshot takes: all the source may hold. It is settled to what the snapshot holds once taken. */
  reserveFor(source: VolumeRecord): number {
    return source.capacityBytes;
  }

  async takeSnapshot(source: VolumeRecord, snapshot: SnapshotRecord): Promise<number> {
    const method = await this.snapshotMethod();
    snapshot.backing = { ...snapshot.backing, method: method.kind };
    return method.take(this.volumes.directory(source), this.snapshotPath(snapshot));
  }

  async releaseSnapshot(snapshot: SnapshotRecord): Promise<void> {
    await (await this.snapshotMethod()).remove(this.snapshotPath(snapshot));
  }

  async snapshotProblem(snapshot: SnapshotRecord): Promise<string | undefined> {
    const dir = this.snapshotPath(snapshot);
    if (!(await fs.lstat(dir).then(() => true, () => false))) return `snapshot ${dir} is missing`;
    return (await this.snapshotMethod()).problem(dir);
  }

  async fill(target: VolumeRecord, source: VolumeSource): Promise<void> {
    const method = await this.snapshotMethod();
    const from = 'snapshot' in source ? this.snapshotPath(source.snapshot) : this.volumes.directory(source.volume);
    target.backing = { ...target.backing, filledBy: method.kind };
    this.volumes.noteVolume(target);
    try {
      await method.fill(from, this.volumes.directory(target), target);
    } catch (err) {
      if (err instanceof StorageOccupiedError) this.volumes.forgetVolume(target);
      throw err;
    }
  }
}
