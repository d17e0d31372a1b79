// The LVM backend: each volume is a logical volume of the pool's volume group, linear (thick) or in a thin pool, that Lode names and tags as its own.
import { promises as fs, readFileSync } from 'node:fs';
import * as path from 'node:path';
import type { BackendCapabilities, BlockBackend, Occupant, RefreshScope, UnrecordedStorage } from '../../pool/backend.js';
import { StorageOccupiedError } from '../../pool/occupied.js';
import type { SnapshotRecord } from '../../pool/snapshot-record.js';
import { reserveBytes, type LvmPoolConfig, type PoolConfig } from '../../pool/pool.js';
import type { PoolStats } from '../../pool/pool-stats.js';
import { MiB } from '../../pool/sizes.js';
import type { VolumeRecord } from '../../pool/volume-record.js';
import { attachNewLoop, detachLoop, devicesBacking, listLoopDevices, refreshLoopCapacity } from '../../sys/loop.js';
import {
  activateLv, createLv, dmDeviceByUuid, dmName, extendLv, LvmNoSpaceError, readLv, readLvs, readVg, removeLv, type LvReport,
} from '../../sys/lvm.js';
import type { MountEntry } from '../../sys/mounts.js';
import { SpaceChanges } from '../space-changes.js';
import { StorageBytes } from '../storage-bytes.js';
import { HealthCache } from '../health-cache.js';
import { log } from '../../util/log.js';
import { PoolFullError } from '../../pool/space-errors.js';
import { COPY_PREFIX, LvmSnapshots, type LvmVolumes } from './lvm-snapshots.js';
import { thickCapacity, thinAvailable, thinBudget, thinDataFree, type ThinFigures } from './lvm-capacity.js';

/** Every logical volume Lode makes is named this, then the volume id. */
export const LV_PREFIX = 'lode-';

/** The tag that marks a logical volume as a volume of the Lode pool `pool`; LVs without it are never touched. */
export function poolTag(pool: string): string {
  return `lode.csi.dev/pool=${pool}`;
}

/** Figures of a thin pool at the last refresh. */
interface ThinState extends ThinFigures {
  metadataPercent: number;
  readAt: number;
}

/** How old the thin pool's figures may be when a volume's condition is asked for. */
const CONDITION_MAX_AGE_MS = 5_000;

export class LvmBackend implements BlockBackend, LvmVolumes {
  readonly kind = 'block';
  /** Logical volumes hold any filesystem the node makes, or none, and grow while in use. */
  readonly capabilities: BackendCapabilities = { rawBlock: true, needsFormat: true, onlineGrowth: true };
  readonly lvm: LvmPoolConfig;
  private extentBytes = 4 * MiB;
  /** Thick: what the VG can still allocate, and its size, at the last refresh. */
  private vgFreeBytes = 0;
  private vgSizeBytes = 0;
  /** Bytes of this pool's own LVs (virtual sizes for thin), as far as this process made or found them. */
  readonly lvBytes = new StorageBytes();
  private thin: ThinState | undefined;
  /** lvcreate, lvextend and lvremove in flight, which a refresh must not read across. */
  readonly spaceChanges = new SpaceChanges();
  private alertLogged = false;
  /** The last check of the VG and thin pool, and the one running now. */
  /**
   * Whether the VG and thin pool are there: an LVM query takes from tens of milliseconds to
   * seconds (a busy VG lock, emulation), and the liveness probe's deadline is one second.
   */
  private readonly health = new HealthCache(async () => {
    try {
      return await this.prerequisite();
    } catch (err) {
      return `pool ${this.config.name}: ${(err as Error).message}`;
    }
  });

  readonly snapshots: LvmSnapshots;

  constructor(readonly config: PoolConfig) {
    if (!config.lvm) throw new Error(`pool ${config.name}: backend=lvm needs vg=`);
    this.lvm = config.lvm;
    this.snapshots = new LvmSnapshots(this);
  }

  /** vg/thin-pool, for messages. */
  private where(): string {
    return this.lvm.thinPool !== undefined ? `${this.lvm.vg}/${this.lvm.thinPool}` : this.lvm.vg;
  }

  lvName(record: Pick<VolumeRecord, 'id'>): string {
    return LV_PREFIX + record.id;
  }

  /** The LV's device node, which LVM makes itself when the LV is active. */
  lvPath(record: Pick<VolumeRecord, 'id'>): string {
    return `/dev/${this.lvm.vg}/${this.lvName(record)}`;
  }

  /** Whether an LV is one of this pool's: Lode's name and this pool's tag, both. */
  isOurs(lv: LvReport): boolean {
    return lv.name.startsWith(LV_PREFIX) && lv.tags.includes(poolTag(this.config.name));
  }

  ownTag(): string {
    return poolTag(this.config.name);
  }

  /** Why the pool's VG or thin pool cannot serve, or undefined. */
  private async prerequisite(): Promise<string | undefined> {
    let vg;
    try {
      vg = await readVg(this.lvm.vg);
    } catch (err) {
      return `pool ${this.config.name}: LVM cannot be queried: ${(err as Error).message}`;
    }
    if (!vg) return `pool ${this.config.name}: volume group ${this.lvm.vg} does not exist (create it: vgcreate ${this.lvm.vg} DEVICE...; docs/backends.md)`;
    this.extentBytes = vg.extentBytes;
    if (this.lvm.thinPool === undefined) return undefined;
    const pool = await readLv(this.lvm.vg, this.lvm.thinPool);
    if (!pool) return `pool ${this.config.name}: thin pool ${this.where()} does not exist (create it: lvcreate --type thin-pool -L SIZE -n ${this.lvm.thinPool} ${this.lvm.vg})`;
    if (pool.attr[0] !== 't') return `pool ${this.config.name}: ${this.where()} is not a thin pool (lv_attr ${pool.attr})`;
    return undefined;
  }

  async open(records: VolumeRecord[], snapshots: SnapshotRecord[] = []): Promise<UnrecordedStorage[]> {
    const problem = await this.prerequisite();
    if (problem !== undefined) throw new Error(problem);
    this.health.record(undefined);
    // As with images: an LV of this pool whose id has no record is never removed. A create
    // records its volume before lvcreate and a delete removes the record last, so no step of
    // Lode's leaves one; the catalog quarantines and reports it.
    // The same holds for snapshots: one with a record is the pool's, its LV (thin or classic) counted.
    const recorded = new Set(records.map((r) => r.id));
    const sizes = new Map(records.map((r) => [r.id, r.capacityBytes]));
    const snapshotIds = new Set(snapshots.map((s) => s.id));
    this.lvBytes.clear();
    const unrecorded: UnrecordedStorage[] = [];
    for (const lv of await readLvs(this.lvm.vg)) {
      if (!this.isOurs(lv)) continue;
      const id = lv.name.slice(LV_PREFIX.length);
      if (snapshotIds.has(id)) {
        this.lvBytes.set(id, lv.sizeBytes);
        continue;
      }
      if (id.startsWith(COPY_PREFIX) && recorded.has(id.slice(COPY_PREFIX.length))) {
        // A thick clone's temporary snapshot whose clone is recorded: Lode's own, of no further use.
        await this.snapshots.removeCopySource(id);
        continue;
      }
      if (recorded.has(id)) {
        // What the LV holds, even past its record: after a grow extended the LV but not yet its
        // record, those extents count as the pool's own until the retried grow records them, so
        // that retry finds them available (it needs no new space) and converges in a full VG.
        // Meanwhile a create may be offered them; LVM then refuses it, RESOURCE_EXHAUSTED.
        this.lvBytes.set(id, Math.max(sizes.get(id) ?? 0, lv.sizeBytes));
        continue;
      }
      unrecorded.push({ id, location: `${this.lvm.vg}/${lv.name}`, bytes: lv.sizeBytes });
      this.lvBytes.set(id, lv.sizeBytes);
    }
    await this.refresh();
    return unrecorded;
  }

  /** Nothing to choose ahead: the LV's name follows from the volume's id. */
  assign(): void {}

  allocationUnit(): number {
    return this.extentBytes;
  }

  stats(allocatedBytes: number, volumes: number, quarantinedVolumes: number): PoolStats {
    const base = { name: this.config.name, backend: 'lvm', allocatedBytes, volumes, quarantinedVolumes };
    if (this.lvm.thinPool !== undefined) {
      const thin = this.thin;
      if (!thin) return { ...base, capacityBytes: 0, availableBytes: 0, dataPath: 'lvm-thin' };
      return {
        ...base,
        capacityBytes: thinBudget(thin),
        availableBytes: thinAvailable(thin, allocatedBytes),
        dataPath: 'lvm-thin',
        thinPool: { dataPercent: thin.dataPercent, metadataPercent: thin.metadataPercent },
      };
    }
    const capacityBytes = thickCapacity({
      vgFreeBytes: this.vgFreeBytes, extentBytes: this.extentBytes, ownBytes: this.lvBytes.total, reserveBytes: reserveBytes(this.config, this.vgSizeBytes),
    });
    return { ...base, capacityBytes, availableBytes: Math.max(0, capacityBytes - allocatedBytes), dataPath: 'lvm-linear' };
  }

  async refresh(scope: RefreshScope = 'full'): Promise<void> {
    if (scope === 'full') this.health.keepCurrent();
    const mark = this.spaceChanges.mark();
    if (mark === undefined) return;
    if (this.lvm.thinPool !== undefined) {
      const state = await this.readThin();
      if (!this.spaceChanges.quietSince(mark)) return;
      this.thin = state;
      this.noteFullness(state);
      return;
    }
    const vg = await readVg(this.lvm.vg);
    if (!vg) throw new Error(`volume group ${this.lvm.vg} is gone`);
    if (!this.spaceChanges.quietSince(mark)) return;
    this.vgFreeBytes = vg.freeBytes;
    this.vgSizeBytes = vg.sizeBytes;
    this.extentBytes = vg.extentBytes;
  }

  /** One lvs of the VG: the thin pool's size and fullness, and the virtual sizes of everyone else's volumes in it. */
  private async readThin(): Promise<ThinState> {
    const thinPool = this.lvm.thinPool ?? '';
    const lvs = await readLvs(this.lvm.vg);
    const pool = lvs.find((lv) => lv.name === thinPool && lv.attr[0] === 't');
    if (!pool) throw new Error(`thin pool ${this.where()} is gone`);
    const foreign = lvs.filter((lv) => lv.pool === thinPool && !this.isOurs(lv)).reduce((sum, lv) => sum + lv.sizeBytes, 0);
    return {
      poolBytes: pool.sizeBytes,
      dataPercent: pool.dataPercent ?? 0,
      metadataPercent: pool.metadataPercent ?? 0,
      extentBytes: this.extentBytes,
      foreignVirtualBytes: foreign,
      overprovision: this.lvm.overprovision,
      reserveBytes: reserveBytes(this.config, pool.sizeBytes),
      readAt: Date.now(),
    };
  }

  /** Logs once each time the thin pool crosses the alert level, so the log is not flooded on every refresh. */
  private noteFullness(t: ThinState): void {
    const full = Math.max(t.dataPercent, t.metadataPercent) >= this.lvm.alertPercent;
    if (full && !this.alertLogged) log('warn', 'thin pool nearly full: writes to its volumes fail when it is full', { pool: this.config.name, thinPool: this.where(), dataPercent: t.dataPercent, metadataPercent: t.metadataPercent });
    this.alertLogged = full;
  }

  /**
   * LVM had no room although the ledger had: someone else took the space in between. Answered
   * like any full pool (RESOURCE_EXHAUSTED, so the provisioner tries elsewhere), with the VG's
   * figure as it now stands.
   */
  async taken(bytes: number, what: string): Promise<PoolFullError> {
    await this.refresh().catch(() => undefined);
    const free = this.thin ? thinDataFree(this.thin) : this.vgFreeBytes;
    return new PoolFullError(this.config.name, bytes, free, `${what} (${this.where()} is used by others too)`);
  }

  /** The LV of the record as LVM has it now; an LV of that name that is not this pool's is an error, never touched. */
  async ownLv(record: Pick<VolumeRecord, 'id'>): Promise<LvReport | undefined> {
    const lv = await readLv(this.lvm.vg, this.lvName(record));
    if (lv && !this.isOurs(lv)) throw new Error(`logical volume ${this.lvm.vg}/${lv.name} exists without the tag ${poolTag(this.config.name)}: it is not this pool's, and Lode leaves it alone`);
    return lv;
  }

  /**
   * The LV of the record where a create is about to make it: one of this pool's is an earlier
   * attempt's under the "creating" record (the core found none before writing it); one of
   * that name that is not this pool's is refused with StorageOccupiedError, nothing made.
   */
  async targetLv(record: Pick<VolumeRecord, 'id'>): Promise<LvReport | undefined> {
    const lv = await readLv(this.lvm.vg, this.lvName(record));
    if (lv && !this.isOurs(lv)) throw new StorageOccupiedError(`${this.lvm.vg}/${lv.name}`, `is a logical volume without the tag ${poolTag(this.config.name)}`);
    return lv;
  }

  /** A thick clone also takes the name of its temporary snapshot of the source (which its steps remove): that is the clone's place too. */
  async occupant(record: VolumeRecord): Promise<Occupant | undefined> {
    const clone = this.lvm.thinPool === undefined && record.contentSource !== undefined && 'volume' in record.contentSource;
    for (const id of [record.id, ...(clone ? [COPY_PREFIX + record.id] : [])]) {
      const found = await this.lvOccupant(id);
      if (found !== undefined) return found;
    }
    return undefined;
  }

  /** The LV named for `id`: one of this pool's is what open reports without a record, and counted as open counts it; another's is only in the way. */
  async lvOccupant(id: string): Promise<Occupant | undefined> {
    const lv = await readLv(this.lvm.vg, this.lvName({ id }));
    if (!lv) return undefined;
    const location = `${this.lvm.vg}/${lv.name}`;
    if (!this.isOurs(lv)) return { kind: 'foreign', location, what: `is a logical volume without the tag ${poolTag(this.config.name)}` };
    this.lvBytes.set(id, lv.sizeBytes);
    return { kind: 'unrecorded', storage: { id, location, bytes: lv.sizeBytes } };
  }

  allocate(record: VolumeRecord): Promise<void> {
    return this.spaceChanges.run(async () => {
      const lv = await this.targetLv(record);
      if (!lv) {
        try {
          const made = { vg: this.lvm.vg, name: this.lvName(record), bytes: record.capacityBytes, tags: [poolTag(this.config.name)] };
          await createLv(this.lvm.thinPool !== undefined ? { ...made, thinPool: this.lvm.thinPool } : made);
        } catch (err) {
          if (err instanceof LvmNoSpaceError) throw await this.taken(record.capacityBytes, `volume ${record.id}`);
          throw err;
        }
      } else if (lv.sizeBytes < record.capacityBytes) {
        await extendLv(this.lvm.vg, lv.name, record.capacityBytes);
      }
      this.lvBytes.set(record.id, record.capacityBytes);
      // Saved with the record's "ready": the device stays this volume's even if someone renames the LV.
      const made = lv ?? (await this.ownLv(record));
      if (made) record.backing = { ...record.backing, dmUuid: made.dmUuid };
    });
  }

  grow(record: VolumeRecord): Promise<void> {
    return this.spaceChanges.run(async () => {
      const lv = await this.ownLv(record);
      if (!lv) throw new Error(`logical volume ${this.lvm.vg}/${this.lvName(record)} is missing`);
      if (lv.sizeBytes < record.capacityBytes) {
        try {
          await extendLv(this.lvm.vg, lv.name, record.capacityBytes);
        } catch (err) {
          if (err instanceof LvmNoSpaceError) throw await this.taken(record.capacityBytes - lv.sizeBytes, `growing ${record.id}`);
          throw err;
        }
      }
      this.lvBytes.set(record.id, record.capacityBytes);
    });
  }

  release(record: VolumeRecord): Promise<void> {
    return this.spaceChanges.run(async () => {
      await this.detach(record);
      // An interrupted thick clone's temporary snapshot of its source goes with the clone.
      if (this.lvm.thinPool === undefined && record.contentSource !== undefined && 'volume' in record.contentSource) {
        await this.snapshots.removeCopySource(COPY_PREFIX + record.id);
      }
      const lv = await readLv(this.lvm.vg, this.lvName(record));
      // lvremove -y of an origin takes its classic snapshots with it: those have records of their own.
      if (lv && this.isOurs(lv) && lv.attr[0] === 'o') {
        throw new Error(`logical volume ${this.lvm.vg}/${lv.name} still has snapshots, which would go with it; delete them first`);
      }
      if (lv && this.isOurs(lv)) await removeLv(this.lvm.vg, lv.name);
      // One of that name without the pool's tag was never this volume's storage: the record can go, the LV stays.
      else if (lv) log('warn', 'a logical volume of a Lode volume\'s name is not tagged as this pool\'s; left alone', { pool: this.config.name, lv: `${this.lvm.vg}/${lv.name}` });
      this.lvBytes.set(record.id, 0);
    });
  }

  /** The read-only loop devices set up over the LV for read-only raw block publications. */
  private async readOnlyLoops(record: VolumeRecord): Promise<string[]> {
    const real = await fs.realpath(this.lvPath(record)).catch(() => undefined);
    if (real === undefined) return [];
    const devices = await listLoopDevices();
    // Also a device the driver's previous container set up: the kernel names it by its path below that container's /dev (see backedBy).
    const over = new Set([...(await devicesBacking(devices, real)).map((d) => d.device), ...devices.filter((d) => d.backingFile === this.lvPath(record)).map((d) => d.device)]);
    return [...over];
  }

  async attach(record: VolumeRecord, readOnly = false): Promise<string> {
    let device = await this.device(record);
    if (device === undefined) {
      const lv = await this.ownLv(record);
      if (!lv) throw new Error(`logical volume ${this.lvm.vg}/${this.lvName(record)} is missing`);
      await activateLv(this.lvm.vg, lv.name);
      device = await this.device(record);
      if (device === undefined) throw new Error(`logical volume ${this.lvm.vg}/${lv.name} was activated but ${this.lvPath(record)} did not appear`);
    }
    if (!readOnly) return device;
    // A read-only bind of a writable device node still lets the pod write: it gets a read-only
    // device of its own, a loop device over the LV (no I/O cost worth naming for a reader).
    return (await attachNewLoop(await fs.realpath(device), true, false)).device;
  }

  async detach(record: VolumeRecord): Promise<void> {
    // The LV itself stays active: it is the volume, as an image file is for a loop pool.
    for (const d of await this.readOnlyLoops(record)) await detachLoop(d);
  }

  async detachDevice(device: string): Promise<void> {
    if (/^\/dev\/loop\d+$/.test(device)) await detachLoop(device);
  }

  async device(record: VolumeRecord): Promise<string | undefined> {
    const p = this.lvPath(record);
    try {
      const st = await fs.stat(p);
      if (st.isBlockDevice()) return p;
    } catch {
      // not active under its name: perhaps renamed
    }
    // An LV renamed under a mount (an operator's slip) is still the volume's device, by its
    // uuid: so unpublish and unstage can still tell the volume's mounts and take them down.
    const uuid = record.backing?.['dmUuid'];
    return typeof uuid === 'string' ? dmDeviceByUuid(uuid) : undefined;
  }

  async refreshDevice(record: VolumeRecord): Promise<void> {
    // lvextend reloads the LV's own table; only loop devices over it must re-read its size.
    for (const d of await this.readOnlyLoops(record)) await refreshLoopCapacity(d);
  }

  async problem(record: VolumeRecord): Promise<string | undefined> {
    const where = `${this.lvm.vg}/${this.lvName(record)}`;
    const lv = await readLv(this.lvm.vg, this.lvName(record));
    if (!lv) return `logical volume ${where} is missing`;
    if (!this.isOurs(lv)) return `logical volume ${where} no longer carries the tag ${poolTag(this.config.name)}`;
    if (lv.sizeBytes < record.capacityBytes) return `logical volume ${where} is ${lv.sizeBytes} bytes, expected ${record.capacityBytes}`;
    if (lv.attr[8] === 'p') return `logical volume ${where} is partial: a physical volume of ${this.lvm.vg} is missing`;
    if (this.lvm.thinPool !== undefined && lv.pool !== this.lvm.thinPool) return `logical volume ${where} is not in thin pool ${this.where()}`;
    return undefined;
  }

  async warning(): Promise<string | undefined> {
    if (this.lvm.thinPool === undefined) return undefined;
    if (!this.thin || Date.now() - this.thin.readAt > CONDITION_MAX_AGE_MS) await this.refresh().catch(() => undefined);
    const t = this.thin;
    if (!t) return undefined;
    const worst = t.dataPercent >= t.metadataPercent ? { what: 'data', percent: t.dataPercent } : { what: 'metadata', percent: t.metadataPercent };
    if (worst.percent < this.lvm.alertPercent) return undefined;
    return `thin pool ${this.where()} is ${worst.percent}% full (${worst.what}); writes to its volumes fail once it is full: extend it (lvextend) or free space`;
  }

  async holdsMount(mount: MountEntry): Promise<boolean> {
    // Its filesystem (source /dev/mapper/VG-lode--ID) or a bind of its node (root /dm-N).
    const prefix = dmName(this.lvm.vg, LV_PREFIX);
    for (const candidate of [mount.source, mount.root.startsWith('/dm-') ? `/dev${mount.root}` : '']) {
      if (!candidate.startsWith('/dev/')) continue;
      const real = await fs.realpath(candidate).catch(() => candidate);
      const base = path.basename(real);
      if (!/^dm-\d+$/.test(base)) continue;
      let name: string;
      try {
        name = readFileSync(`/sys/block/${base}/dm/name`, 'utf8').trim();
      } catch {
        continue;
      }
      if (name.startsWith(prefix)) return true;
    }
    return false;
  }

  /** The last check of the VG (and thin pool) at once; a full refresh runs an old one again in the background (HealthCache). */
  async healthProblem(): Promise<string | undefined> {
    return this.health.current();
  }

}
