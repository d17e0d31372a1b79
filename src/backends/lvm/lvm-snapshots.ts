// Snapshots, restores and clones of logical volumes: thin snapshots in a thin pool, classic copy-on-write snapshots and full copies in a thick one.
import { promises as fs } from 'node:fs';
import type { Occupant, SnapshotSupport, VolumeSource } from '../../pool/backend.js';
import type { LvmPoolConfig, PoolConfig } from '../../pool/pool.js';
import { humanBytes } from '../../util/quantity.js';
import type { SnapshotRecord } from '../../pool/snapshot-record.js';
import { SnapshotRefusedError } from '../../pool/snapshot-refused.js';
import type { VolumeRecord } from '../../pool/volume-record.js';
import type { PoolFullError } from '../../pool/space-errors.js';
import { copyDevice } from '../../sys/device-copy.js';
import { activateLv, createLv, createSnapshotLv, extendLv, LvmNoSpaceError, readLv, removeLv, type LvReport } from '../../sys/lvm.js';
import type { SpaceChanges } from '../space-changes.js';
import type { StorageBytes } from '../storage-bytes.js';
import { log } from '../../util/log.js';

/**
 * The id under which a thick clone's temporary snapshot of its source is named (lode-copy-<id>);
 * volume and snapshot ids start "lv-" and "sn-", so it is never one of theirs.
 */
export const COPY_PREFIX = 'copy-';

/** What the snapshots need of the LVM backend: its names, its tag, its byte tally. */
export interface LvmVolumes {
  readonly config: PoolConfig;
  readonly lvm: LvmPoolConfig;
  /** Bytes of this pool's own LVs, by id: the thick capacity counts them. */
  readonly lvBytes: StorageBytes;
  readonly spaceChanges: SpaceChanges;
  lvName(record: Pick<VolumeRecord, 'id'>): string;
  lvPath(record: Pick<VolumeRecord, 'id'>): string;
  isOurs(lv: LvReport): boolean;
  /** The tag that makes an LV this pool's. */
  ownTag(): string;
  /** The LV of that id as LVM has it now; one of that name that is not this pool's is an error. */
  ownLv(record: Pick<VolumeRecord, 'id'>): Promise<LvReport | undefined>;
  /** The same where a create is about to make it: one that is not this pool's is StorageOccupiedError. */
  targetLv(record: Pick<VolumeRecord, 'id'>): Promise<LvReport | undefined>;
  /** What already has the LV name of `id` (see SnapshotSupport.snapshotOccupant). */
  lvOccupant(id: string): Promise<Occupant | undefined>;
  /** LVM had no room although the ledger had: a full pool's answer. */
  taken(bytes: number, what: string): Promise<PoolFullError>;
  allocationUnit(): number;
}

async function isBlockDevice(p: string): Promise<boolean> {
  return (await fs.stat(p).catch(() => undefined))?.isBlockDevice() === true;
}

/** Whether a classic snapshot's state (lv_attr[4]) says it overflowed and LVM dropped it. */
function invalidated(lv: LvReport): boolean {
  return lv.attr[0] === 's' && (lv.attr[4] === 'I' || lv.attr[4] === 'S');
}

/**
 * Thin: a snapshot is a thin snapshot of the volume, and a restore or clone a thin snapshot of
 * the snapshot or volume, grown to its size: instant, blocks shared, independent of each
 * other. Each is charged its virtual size, like any thin volume (the overprovision rule).
 *
 * Thick: a snapshot is a classic copy-on-write snapshot, its area snapshot-size= of its origin:
 * instant, charged its area, gone with its origin (so a volume with snapshots is not deleted),
 * and invalid once the origin's rewrites overflow the area. A restore is a new linear volume
 * filled with a copy of the snapshot. A clone copies a temporary classic snapshot of its
 * source rather than the source itself: the driver cannot freeze the source for the copy,
 * since LVM's own freeze when it snapshots a volume fails on a filesystem frozen already
 * (kernels before 6.8), and a raw block volume has nothing to freeze; the temporary snapshot
 * is a point in time for both. It is as large as its source, so it never overflows during the
 * copy, and it is held outside the ledger for as long as the copy takes.
 */
export class LvmSnapshots implements SnapshotSupport {
  readonly independentSnapshots: boolean;

  constructor(private readonly v: LvmVolumes) {
    this.independentSnapshots = v.lvm.thinPool !== undefined;
  }

  private get thin(): boolean {
    return this.v.lvm.thinPool !== undefined;
  }

  private get vg(): string {
    return this.v.lvm.vg;
  }

  private tags(): string[] {
    return [this.v.ownTag()];
  }

  method(): string {
    if (this.thin) return 'a thin snapshot (instant; blocks shared until either side rewrites them)';
    const s = this.v.lvm.snapshotSize;
    if (s === undefined) return 'none for snapshots (a thick pool needs snapshot-size=); clones are full copies';
    return `a classic copy-on-write snapshot with an area of ${'percent' in s ? `${s.percent}% of its volume` : humanBytes(s.bytes)} (instant; depends on its volume)`;
  }

  /** Device-mapper suspends the origin while a snapshot is made, with its filesystem frozen by the kernel. */
  consistentCopy(): boolean {
    return true;
  }

  /** A thick snapshot's area: snapshot-size= of the origin, in whole extents. */
  private cowBytes(source: VolumeRecord): number {
    const s = this.v.lvm.snapshotSize;
    if (s === undefined) {
      throw new SnapshotRefusedError(`pool ${this.v.config.name} has thick volumes (volume group ${this.vg}, no thin-pool=), whose snapshots need a copy-on-write area: `
        + 'give the pool snapshot-size=PERCENT% (of each volume) or snapshot-size=SIZE, or use a thin pool (docs/backends.md, "lvm")');
    }
    const unit = this.v.allocationUnit();
    const bytes = 'percent' in s ? Math.ceil((source.capacityBytes * s.percent) / 100) : s.bytes;
    return Math.max(unit, Math.ceil(bytes / unit) * unit);
  }

  reserveFor(source: VolumeRecord): number {
    return this.thin ? source.capacityBytes : this.cowBytes(source);
  }

  snapshotOccupant(snapshot: SnapshotRecord): Promise<Occupant | undefined> {
    return this.v.lvOccupant(snapshot.id);
  }

  takeSnapshot(source: VolumeRecord, snapshot: SnapshotRecord): Promise<number> {
    return this.v.spaceChanges.run(async () => {
      // One there is an interrupted attempt of this "creating" record's: an older point in time, so made again.
      if (await this.v.targetLv(snapshot)) await removeLv(this.vg, this.v.lvName(snapshot));
      const cowBytes = this.thin ? undefined : this.cowBytes(source);
      try {
        await createSnapshotLv({
          vg: this.vg, name: this.v.lvName(snapshot), origin: this.v.lvName(source), tags: this.tags(), ...(cowBytes !== undefined ? { cowBytes } : {}),
        });
      } catch (err) {
        if (err instanceof LvmNoSpaceError) throw await this.v.taken(cowBytes ?? 0, `snapshot ${snapshot.id}`);
        throw err;
      }
      const lv = await this.v.ownLv(snapshot);
      if (!lv) throw new Error(`logical volume ${this.vg}/${this.v.lvName(snapshot)} was created but is not listed`);
      snapshot.backing = { ...snapshot.backing, kind: this.thin ? 'thin' : 'cow' };
      this.v.lvBytes.set(snapshot.id, lv.sizeBytes);
      return this.thin ? source.capacityBytes : lv.sizeBytes;
    });
  }

  releaseSnapshot(snapshot: SnapshotRecord): Promise<void> {
    return this.v.spaceChanges.run(async () => {
      const lv = await readLv(this.vg, this.v.lvName(snapshot));
      if (lv && this.v.isOurs(lv)) await removeLv(this.vg, lv.name);
      else if (lv) log('warn', 'a logical volume of a Lode snapshot\'s name is not tagged as this pool\'s; left alone', { pool: this.v.config.name, lv: `${this.vg}/${lv.name}` });
      this.v.lvBytes.set(snapshot.id, 0);
    });
  }

  async snapshotProblem(snapshot: SnapshotRecord): Promise<string | undefined> {
    const where = `${this.vg}/${this.v.lvName(snapshot)}`;
    const lv = await readLv(this.vg, this.v.lvName(snapshot));
    if (!lv) return `logical volume ${where} of the snapshot is missing`;
    if (!this.v.isOurs(lv)) return `logical volume ${where} no longer carries the tag ${this.v.ownTag()}`;
    if (lv.attr[8] === 'p') return `logical volume ${where} is partial: a physical volume of ${this.vg} is missing`;
    if (invalidated(lv)) {
      return `snapshot ${where} is invalid: its volume's rewrites overflowed its ${humanBytes(lv.sizeBytes)} copy-on-write area and LVM dropped it; `
        + 'its data is lost: delete it (a larger snapshot-size= keeps the next one)';
    }
    return undefined;
  }

  fill(target: VolumeRecord, source: VolumeSource): Promise<void> {
    return this.v.spaceChanges.run(async () => {
      // A snapshot LV gone or invalidated is the operator's to replace: refused, not a fault.
      if ('snapshot' in source) {
        const problem = await this.snapshotProblem(source.snapshot);
        if (problem !== undefined) throw new SnapshotRefusedError(`cannot restore snapshot ${source.snapshot.id}: ${problem}`);
      }
      if (this.thin) await this.thinFill(target, source);
      else await this.thickFill(target, source);
      this.v.lvBytes.set(target.id, target.capacityBytes);
      const made = await this.v.ownLv(target);
      if (made) target.backing = { ...target.backing, dmUuid: made.dmUuid, filledBy: this.thin ? 'thin-snapshot' : 'copy' };
    });
  }

  /** A thin snapshot of the source, usable as a volume, grown to the size asked. */
  private async thinFill(target: VolumeRecord, source: VolumeSource): Promise<void> {
    const origin = 'snapshot' in source ? source.snapshot : source.volume;
    let lv = await this.v.targetLv(target);
    if (!lv) {
      // lvcreate commits the whole LV at once: one found is a complete snapshot of this source, made by an interrupted attempt.
      try {
        await createSnapshotLv({ vg: this.vg, name: this.v.lvName(target), origin: this.v.lvName(origin), tags: this.tags(), usable: true });
      } catch (err) {
        if (err instanceof LvmNoSpaceError) throw await this.v.taken(target.capacityBytes, `volume ${target.id}`);
        throw err;
      }
      lv = await this.v.ownLv(target);
    }
    if (lv && lv.sizeBytes < target.capacityBytes) await extendLv(this.vg, lv.name, target.capacityBytes);
  }

  /** A new linear volume holding a copy of the snapshot, or of a temporary snapshot of the volume. */
  private async thickFill(target: VolumeRecord, source: VolumeSource): Promise<void> {
    if (!(await this.v.targetLv(target))) {
      try {
        await createLv({ vg: this.vg, name: this.v.lvName(target), bytes: target.capacityBytes, tags: this.tags() });
      } catch (err) {
        if (err instanceof LvmNoSpaceError) throw await this.v.taken(target.capacityBytes, `volume ${target.id}`);
        throw err;
      }
    }
    if ('snapshot' in source) {
      // A classic snapshot is active with its origin, which may not be since a reboot.
      if (!(await isBlockDevice(this.v.lvPath(source.snapshot)))) await activateLv(this.vg, this.v.lvName(source.snapshot));
      await copyDevice(this.v.lvPath(source.snapshot), this.v.lvPath(target), source.snapshot.sizeBytes);
      return;
    }
    const temp = { id: COPY_PREFIX + target.id };
    await this.removeCopySource(temp.id);
    const bytes = source.volume.capacityBytes;
    try {
      // LVM shrinks an area larger than a whole rewrite of its origin needs to just that.
      await createSnapshotLv({ vg: this.vg, name: this.v.lvName(temp), origin: this.v.lvName(source.volume), tags: this.tags(), cowBytes: bytes + Math.ceil(bytes / 32) + this.v.allocationUnit() });
    } catch (err) {
      if (err instanceof LvmNoSpaceError) throw await this.v.taken(bytes, `the point-in-time copy of ${source.volume.id} for clone ${target.id}`);
      throw err;
    }
    try {
      const lv = await this.v.ownLv(temp);
      this.v.lvBytes.set(temp.id, lv?.sizeBytes ?? 0);
      await copyDevice(this.v.lvPath(temp), this.v.lvPath(target), bytes);
    } finally {
      await this.removeCopySource(temp.id);
    }
  }

  /** Removes a thick clone's temporary snapshot (`copy-<target id>`), when there is one of this pool's. */
  async removeCopySource(id: string): Promise<void> {
    const lv = await readLv(this.vg, this.v.lvName({ id }));
    if (lv && this.v.isOurs(lv)) await removeLv(this.vg, lv.name);
    this.v.lvBytes.set(id, 0);
  }
}
