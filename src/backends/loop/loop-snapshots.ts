// Snapshots, restores and clones of loop images: a reflink copy of the image where the pool's filesystem shares blocks, else a full sparse copy.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { Occupant, SnapshotSupport, UnrecordedStorage, VolumeSource } from '../../pool/backend.js';
import { snapshotsDir, type PoolConfig } from '../../pool/pool.js';
import type { SnapshotRecord } from '../../pool/snapshot-record.js';
import type { VolumeRecord } from '../../pool/volume-record.js';
import { allocatedBytes, copyFile, reflinkSupported, type CopyMethod } from '../../sys/file-copy.js';
import { StorageOccupiedError } from '../../pool/occupied.js';
import { entryAt, kindOf } from '../../sys/entry-at.js';
import type { SpaceChanges } from '../space-changes.js';
import type { StorageBytes } from '../storage-bytes.js';

/** What the snapshots need of the loop backend's images and its byte tally. */
export interface LoopImages {
  readonly config: PoolConfig;
  imagePath(record: Pick<VolumeRecord, 'id'>): string;
  /** Bytes of each file of the pool as far as they are missing from the free space. */
  readonly imageBytes: StorageBytes;
  readonly spaceChanges: SpaceChanges;
  preallocate(image: string, bytes: number): Promise<void>;
  /** A new image exists: no loop device yet. */
  noteImage(image: string): void;
}

const SNAPSHOT_SUFFIX = '.img';

/**
 * Refuses, with StorageOccupiedError, anything but a regular file where an image or a
 * snapshot's file goes. A regular file there is an earlier attempt's under the object's
 * "creating" record: the core found nothing there before it wrote that record.
 */
export async function refuseNonImage(file: string): Promise<void> {
  const st = await entryAt(file);
  if (st !== undefined && !st.isFile()) throw new StorageOccupiedError(file, `is ${kindOf(st)}, not an image file`);
}

/** Bytes of a volume's image that are its own: all of them, less what a reflinked fill shares with its source. */
export function exclusiveBytes(record: VolumeRecord): number {
  const shared = record.backing?.['sharedBytes'];
  return Math.max(0, record.capacityBytes - (typeof shared === 'number' ? shared : 0));
}

/**
 * Capacity, honestly: a snapshot is charged the blocks its file holds right after the copy.
 * For a sparse copy that is the data the image held; for a reflink it is the same: the
 * written blocks, now shared (preallocated blocks never written stay the source's alone, on
 * XFS and btrfs alike, and holes in the clone). Every shared block is one the source (or a
 * restore) needs anew when it rewrites it, so the charge is what the snapshot can come to
 * take; reflinked blocks are not counted as missing from the free space, so the charge is a
 * reservation against what the disk holds.
 */
export class LoopSnapshots implements SnapshotSupport {
  readonly independentSnapshots = true;
  private copyMethod: CopyMethod = 'copy';

  constructor(private readonly images: LoopImages) {}

  private get dir(): string {
    return snapshotsDir(this.images.config);
  }

  snapshotPath(snapshot: Pick<SnapshotRecord, 'id'>): string {
    return path.join(this.dir, snapshot.id + SNAPSHOT_SUFFIX);
  }

  /** Learns how the pool's filesystem copies, and the state of the recorded snapshots' files; reports the unrecorded ones. */
  async open(snapshots: SnapshotRecord[]): Promise<UnrecordedStorage[]> {
    await fs.mkdir(this.dir, { recursive: true, mode: 0o700 });
    this.copyMethod = (await reflinkSupported(this.dir)) ? 'reflink' : 'copy';
    const recorded = new Map(snapshots.map((s) => [s.id, s]));
    const unrecorded: UnrecordedStorage[] = [];
    for (const name of await fs.readdir(this.dir)) {
      if (!name.endsWith(SNAPSHOT_SUFFIX)) continue;
      const id = name.slice(0, -SNAPSHOT_SUFFIX.length);
      const file = path.join(this.dir, name);
      const snap = recorded.get(id);
      if (snap !== undefined) {
        const bytes = await allocatedBytes(file).catch(() => 0);
        this.images.imageBytes.set(file, snap.backing?.['method'] === 'reflink' ? 0 : bytes);
      } else {
        unrecorded.push(await this.unrecordedFile(id, file));
      }
    }
    return unrecorded;
  }

  /** Like an image with no record: kept, its blocks counted, its id quarantined. */
  private async unrecordedFile(id: string, file: string): Promise<UnrecordedStorage> {
    const bytes = await allocatedBytes(file).catch(() => 0);
    this.images.imageBytes.set(file, bytes);
    return { id, location: file, bytes };
  }

  async snapshotOccupant(snapshot: SnapshotRecord): Promise<Occupant | undefined> {
    const file = this.snapshotPath(snapshot);
    if ((await entryAt(file)) === undefined) return undefined;
    return { kind: 'unrecorded', storage: await this.unrecordedFile(snapshot.id, file) };
  }

  method(): string {
    return this.copyMethod === 'reflink' ? 'a reflink copy of the image (blocks shared until either side rewrites them)' : 'a full sparse copy of the image';
  }

  /** A reflink is atomic: what a crash at that instant would leave. A copy takes time, so a mounted source is frozen around it. */
  consistentCopy(): boolean {
    return this.copyMethod === 'reflink';
  }

  reserveFor(source: VolumeRecord): number {
    return source.capacityBytes;
  }

  takeSnapshot(source: VolumeRecord, snapshot: SnapshotRecord): Promise<number> {
    return this.images.spaceChanges.run(async () => {
      const file = this.snapshotPath(snapshot);
      const method = this.copyMethod;
      snapshot.backing = { ...snapshot.backing, method };
      await refuseNonImage(file);
      await copyFile(this.images.imagePath(source), file, method);
      const bytes = await allocatedBytes(file);
      this.images.imageBytes.set(file, method === 'reflink' ? 0 : bytes);
      return bytes;
    });
  }

  releaseSnapshot(snapshot: SnapshotRecord): Promise<void> {
    return this.images.spaceChanges.run(async () => {
      const file = this.snapshotPath(snapshot);
      await fs.rm(file, { force: true });
      this.images.imageBytes.set(file, 0);
    });
  }

  async snapshotProblem(snapshot: SnapshotRecord): Promise<string | undefined> {
    const file = this.snapshotPath(snapshot);
    try {
      const st = await fs.stat(file);
      if (st.size < snapshot.sizeBytes) return `snapshot image ${file} is ${st.size} bytes, expected ${snapshot.sizeBytes}`;
      return undefined;
    } catch {
      return `snapshot image ${file} is missing`;
    }
  }

  /**
   * The new image is a copy of the source's, then preallocated to its full size like any
   * image (a reflinked range stays shared; only the rest gets blocks of its own).
   */
  fill(target: VolumeRecord, source: VolumeSource): Promise<void> {
    return this.images.spaceChanges.run(async () => {
      const from = 'snapshot' in source ? this.snapshotPath(source.snapshot) : this.images.imagePath(source.volume);
      const image = this.images.imagePath(target);
      const method = this.copyMethod;
      await refuseNonImage(image);
      await copyFile(from, image, method);
      // What the reflink shares with its source (its blocks before preallocation): recorded, so a restart counts them as now.
      const shared = method === 'reflink' ? await allocatedBytes(image) : 0;
      target.backing = { ...target.backing, filledBy: method, ...(shared > 0 ? { sharedBytes: shared } : {}) };
      this.images.noteImage(image);
      await this.images.preallocate(image, target.capacityBytes);
      this.images.imageBytes.set(image, exclusiveBytes(target));
    });
  }
}
