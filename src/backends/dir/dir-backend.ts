// The quota-directory backend: each volume a directory of the pool's own filesystem, held to its size by that filesystem (XFS or ext4 project quotas, btrfs qgroups).
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { BackendCapabilities, DirectoryBackend, Occupant, RefreshScope, UnrecordedStorage, VolumeUsage } from '../../pool/backend.js';
import { StorageOccupiedError } from '../../pool/occupied.js';
import { recordsDir, reserveBytes, type PoolConfig } from '../../pool/pool.js';
import type { PoolStats } from '../../pool/pool-stats.js';
import type { SnapshotRecord } from '../../pool/snapshot-record.js';
import { MiB } from '../../pool/sizes.js';
import type { VolumeRecord } from '../../pool/volume-record.js';
import { containingMount, isAtOrBeneath } from '../../sys/containing-mount.js';
import { readMountTable, type MountEntry } from '../../sys/mounts.js';
import { directoryProblem } from '../../sys/directory-usable.js';
import { entryAt, kindOf } from '../../sys/entry-at.js';
import { isProjectQuotaFsType } from '../../sys/project-quota.js';
import { BtrfsQgroupMethod } from './btrfs-qgroup-method.js';
import { DirSnapshots } from './dir-snapshots.js';
import { ProjectIds } from './project-ids.js';
import { ProjectQuotaMethod, recordedProjectId } from './project-quota-method.js';
import type { QuotaMethod, VolumesPlace } from './quota-method.js';
import { log } from '../../util/log.js';
import { HEALTH_MAX_AGE_MS, HealthCache } from '../health-cache.js';

const NEEDS = 'the dir backend needs XFS mounted with prjquota, ext4 with the project and quota features mounted with prjquota, or btrfs with quotas enabled';

/** A volume the pool holds: its limit and (once a refresh has read it) what it uses. */
interface Held {
  limitBytes: number;
  projectId?: number;
}

export class DirBackend implements DirectoryBackend {
  readonly kind = 'directory';
  /** `<pool dir>/volumes`: the records' folder, which also holds one directory per volume. */
  private readonly volumesDir: string;
  /** The filesystem's mechanism, found on first use (release may come before open). */
  private place: Promise<{ place: VolumesPlace; method: QuotaMethod }> | undefined;
  private fsType: QuotaMethod['fsType'] | undefined;
  private readonly ids = new ProjectIds();
  /** Every volume directory of the pool, recorded or not, by id. */
  private readonly held = new Map<string, Held>();
  /** Bytes each volume used at the last refresh. */
  private used = new Map<string, number>();
  private fsTotalBytes = 0;
  private fsFreeBytes = 0;
  /** How a writer can get past its volume's limit on this filesystem; known once open. */
  private escapable: string | undefined;
  /** Volumes whose writers a survey found past their limit (and put back under it), with what was found. */
  private readonly caught = new Map<string, string>();
  /** Whether the filesystem still enforces the quotas (healthProblem). */
  private readonly quotaHealth: HealthCache;
  private caughtCount = 0;
  /** Snapshots, restores and clones: btrfs snapshots, or copies of the tree. */
  readonly snapshots: DirSnapshots;

  /**
   * `healthMaxAgeMs`: how old the quota check's answer may get before a full refresh starts
   * another (HealthCache), by the clock `now` (a test's own, to age an answer without waiting).
   */
  constructor(readonly config: PoolConfig, healthMaxAgeMs = HEALTH_MAX_AGE_MS, now: () => number = Date.now) {
    this.volumesDir = recordsDir(config);
    this.quotaHealth = new HealthCache(async () => {
      try {
        const off = await (await this.mechanism()).method.unenforced();
        return off === undefined ? undefined : `pool ${this.config.name}: ${off}`;
      } catch (err) {
        return `pool ${this.config.name}: ${(err as Error).message}`;
      }
    }, healthMaxAgeMs, now);
    this.snapshots = new DirSnapshots({
      config,
      directory: (r) => this.directory(r),
      quotaMethod: async () => (await this.mechanism()).method,
      noteVolume: (r) => this.noteVolume(r),
      forgetVolume: (r) => this.held.delete(r.id),
    });
  }

  /** Directories share the pool's filesystem: no formatting, no raw block, and the fsType is the pool's own. */
  get capabilities(): BackendCapabilities {
    return { rawBlock: false, needsFormat: false, onlineGrowth: true, ...(this.fsType !== undefined ? { fixedFsType: this.fsType } : {}) };
  }

  directory(record: Pick<VolumeRecord, 'id'>): string {
    return path.join(this.volumesDir, record.id);
  }

  private async mechanism(): Promise<{ place: VolumesPlace; method: QuotaMethod }> {
    this.place ??= (async () => {
      await fs.mkdir(this.volumesDir, { recursive: true, mode: 0o700 });
      const containing = await containingMount(this.volumesDir);
      const place: VolumesPlace = { dir: containing.realPath, containing };
      const fsType = containing.mount.fsType;
      let method: QuotaMethod;
      if (isProjectQuotaFsType(fsType)) method = new ProjectQuotaMethod(fsType, place);
      else if (fsType === 'btrfs') method = new BtrfsQgroupMethod(place);
      else throw new Error(`pool ${this.config.name}: ${this.config.dir} is on ${fsType || 'an unknown filesystem'} (mounted at ${containing.mount.mountPoint}); ${NEEDS}`);
      return { place, method };
    })();
    try {
      return await this.place;
    } catch (err) {
      this.place = undefined; // a later call looks again (the operator may have fixed it)
      throw err;
    }
  }

  async open(records: VolumeRecord[], snapshots: SnapshotRecord[] = []): Promise<UnrecordedStorage[]> {
    const { method } = await this.mechanism();
    const off = await method.unenforced();
    if (off !== undefined) throw new Error(`pool ${this.config.name}: ${off}; ${NEEDS}`);
    this.quotaHealth.record(undefined);
    this.fsType = method.fsType;
    this.escapable = await method.escapableBy();
    // Said at every start, never silently: the operator decides whether the pool's users are trusted that far.
    log('warn', 'a volume\'s writers can get past its limit on this pool\'s filesystem', { pool: this.config.name, fsType: method.fsType, how: this.escapable, help: 'docs/backends.md, "What holds a volume\'s writers"' });
    await method.prepare(records, (r) => this.directory(r));
    this.ids.clear();
    this.held.clear();
    this.used = new Map();
    const recorded = new Map(records.map((r) => [r.id, r]));
    for (const r of records) {
      const projectId = recordedProjectId(r);
      if (projectId !== undefined) this.ids.take(projectId);
      this.held.set(r.id, { limitBytes: r.capacityBytes, ...(projectId !== undefined ? { projectId } : {}) });
    }
    // Ids the filesystem already counts or limits are someone's (a leftover, another tool's): never shared.
    for (const id of await method.projectIdsInUse()) this.ids.take(id);
    // A directory without a record is never removed here: a create records its volume before
    // making the directory and a delete removes the record last, so no step of Lode's leaves
    // one. The catalog reports it; its project id is never handed out again.
    const unrecorded: UnrecordedStorage[] = [];
    for (const entry of await fs.readdir(this.volumesDir, { withFileTypes: true })) {
      if (!entry.isDirectory() || recorded.has(entry.name)) continue;
      unrecorded.push(await this.unrecordedDirectory(method, entry.name));
    }
    unrecorded.push(...(await this.snapshots.open(snapshots)));
    await this.refresh();
    return unrecorded;
  }

  /** A volume directory with no record: what it holds counted as a volume's, its project id never handed out. */
  private async unrecordedDirectory(method: QuotaMethod, id: string): Promise<UnrecordedStorage> {
    const dir = this.directory({ id });
    const found = await method.inspect(dir);
    if (found.projectId !== undefined && found.projectId > 0) this.ids.take(found.projectId);
    this.held.set(id, { limitBytes: found.bytes, ...(found.projectId ? { projectId: found.projectId } : {}) });
    return { id, location: dir, bytes: found.bytes };
  }

  /** A directory of the volume's name is what open reports without a record; anything else there is only in the way. */
  async occupant(record: VolumeRecord): Promise<Occupant | undefined> {
    const dir = this.directory(record);
    const st = await entryAt(dir);
    if (st === undefined) return undefined;
    if (!st.isDirectory()) return { kind: 'foreign', location: dir, what: `is ${kindOf(st)}, not a volume directory` };
    const { method } = await this.mechanism();
    return { kind: 'unrecorded', storage: await this.unrecordedDirectory(method, record.id) };
  }

  /** A project id of its own for a volume on XFS or ext4, recorded before its directory exists. */
  assign(record: VolumeRecord): void {
    if (this.fsType === 'btrfs') return; // a subvolume's qgroup follows from the subvolume
    if (this.fsType === undefined) throw new Error(`pool ${this.config.name} is not open`);
    const existing = recordedProjectId(record);
    const projectId = existing ?? this.ids.next();
    if (existing !== undefined) this.ids.take(existing);
    record.backing = { ...record.backing, projectId };
  }

  /**
   * Capacity = the configured size, or the filesystem's size less the reserve; allocated = the
   * sum of the volumes' limits; no overcommit. The pool's filesystem is shared (the node's
   * other users write to it too), so what is still available is also bounded by what the
   * filesystem can physically give: its free space less the part of every volume's limit that
   * volume has not used yet (and less the reserve for an unsized pool). Otherwise a full disk
   * would still report room, and a new volume would fail at its first writes, not at create.
   */
  stats(allocatedBytes: number, volumes: number, quarantinedVolumes: number): PoolStats {
    const reserve = this.config.sizeBytes === undefined ? reserveBytes(this.config, this.fsTotalBytes) : 0;
    const capacityBytes = this.config.sizeBytes ?? Math.max(0, this.fsTotalBytes - reserve);
    let headroom = 0;
    for (const [id, h] of this.held) headroom += Math.max(0, h.limitBytes - (this.used.get(id) ?? 0));
    const physical = this.fsFreeBytes - headroom - reserve;
    return {
      name: this.config.name,
      backend: 'dir',
      capacityBytes,
      allocatedBytes,
      availableBytes: Math.max(0, Math.min(capacityBytes - allocatedBytes, physical)),
      volumes,
      quarantinedVolumes,
      dataPath: 'native',
      ...(this.escapable !== undefined ? { escapableBy: this.escapable } : {}),
      limitEscapes: this.caughtCount,
    };
  }

  /**
   * One statfs of the filesystem and, in a full refresh, one quota survey of every volume's
   * usage (on btrfs `subvolume list` and `qgroup show`) and the quota check behind
   * healthProblem once its answer is old. After the pool's own create, delete or growth the
   * statfs alone: the backend's figures already follow that change (a new volume counts all of
   * its limit as still to be written until a survey reads what it holds; a deleted one is
   * forgotten), so the survey waits for the timer, GetCapacity or a create about to be refused.
   */
  async refresh(scope: RefreshScope = 'full'): Promise<void> {
    const s = await fs.statfs(this.volumesDir);
    this.fsTotalBytes = s.blocks * s.bsize;
    this.fsFreeBytes = s.bavail * s.bsize;
    if (this.fsType === undefined || scope === 'free-space') return;
    this.quotaHealth.keepCurrent();
    const { method } = await this.mechanism();
    const { used, caught } = await method.survey(new Map([...this.held].map(([id, h]) => [id, h.projectId])));
    this.used = used;
    for (const [id, found] of caught) {
      this.caughtCount += 1;
      this.caught.set(id, `${found} (${new Date().toISOString()})`);
      log('error', 'a volume\'s writer got past its limit; put back under it', { pool: this.config.name, volume: id, found });
    }
  }

  async allocate(record: VolumeRecord): Promise<void> {
    const { method } = await this.mechanism();
    this.noteVolume(record);
    try {
      await method.create(this.directory(record), record);
    } catch (err) {
      // Refused before anything was made: the volume takes nothing (its record goes, not its place).
      if (err instanceof StorageOccupiedError) this.held.delete(record.id);
      throw err;
    }
  }

  /** Counted before the directory exists: until a refresh says otherwise, all of it may yet be written. */
  private noteVolume(record: VolumeRecord): void {
    const projectId = recordedProjectId(record);
    this.held.set(record.id, { limitBytes: record.capacityBytes, ...(projectId !== undefined ? { projectId } : {}) });
  }

  async grow(record: VolumeRecord): Promise<void> {
    const { method } = await this.mechanism();
    const h = this.held.get(record.id);
    if (h !== undefined) h.limitBytes = record.capacityBytes;
    await method.setLimit(this.directory(record), record);
  }

  async release(record: VolumeRecord): Promise<void> {
    const { place, method } = await this.mechanism();
    const dir = this.directory(record);
    await this.refuseMounted(dir, place);
    await method.remove(dir, record);
    this.held.delete(record.id);
    this.used.delete(record.id);
    this.caught.delete(record.id);
    const projectId = recordedProjectId(record);
    if (projectId !== undefined) this.ids.free(projectId);
  }

  /**
   * Deleting through a mount would delete what the mount shows (another filesystem inside the
   * volume, or the volume itself seen elsewhere, still in use): refuse, and say where.
   */
  private async refuseMounted(dir: string, place: VolumesPlace): Promise<void> {
    const st = await fs.lstat(dir).catch(() => undefined);
    if (st === undefined || !st.isDirectory()) return;
    const real = path.join(place.dir, path.basename(dir));
    const inFs = path.posix.join(place.containing.pathInFilesystem, path.basename(dir));
    for (const m of await readMountTable()) {
      const inside = isAtOrBeneath(m.mountPoint, real);
      const showsIt = m.devId === place.containing.mount.devId && isAtOrBeneath(m.root, inFs);
      if (inside || showsIt) {
        throw new Error(`pool ${this.config.name}: volume directory ${dir} is still mounted (at ${m.mountPoint}); unmount it before the volume can be deleted`);
      }
    }
  }

  async usage(record: VolumeRecord): Promise<VolumeUsage> {
    const { method } = await this.mechanism();
    return method.usage(this.directory(record), record);
  }

  async problem(record: VolumeRecord): Promise<string | undefined> {
    const dir = this.directory(record);
    const st = await fs.lstat(dir).catch(() => undefined);
    if (st === undefined) return `volume directory ${dir} is missing`;
    if (!st.isDirectory()) return `volume directory ${dir} is not a directory`;
    const { method } = await this.mechanism();
    return method.problem(dir, record);
  }

  /**
   * A bind mount of a volume directory shows the pool filesystem's device and, as its root,
   * the directory's path inside that filesystem (for a btrfs subvolume too: mountinfo names the
   * filesystem's device, not the subvolume's anonymous one that stat reports).
   */
  async holdsMount(mount: MountEntry, record?: VolumeRecord): Promise<boolean> {
    const { place } = await this.mechanism();
    if (mount.devId !== place.containing.mount.devId) return false;
    if (record !== undefined) {
      // Exactly the volume's directory; a bind whose directory was removed under it (damaged
      // storage) shows "//deleted" after its root and is still the volume's, to be taken down.
      const own = path.posix.join(place.containing.pathInFilesystem, record.id);
      return mount.root === own || mount.root === `${own}//deleted`;
    }
    const below = path.posix.relative(place.containing.pathInFilesystem, mount.root);
    return below !== '' && !below.startsWith('..') && !below.split('/')[0]?.endsWith('.json');
  }

  /** Sizes are chosen in whole MiB (see chooseSize); nothing of the backend asks for more. */
  allocationUnit(): number {
    return MiB;
  }

  limitEscapes(): ReadonlyMap<string, string> {
    return this.caught;
  }

  /**
   * A volume whose writer was caught past its limit stays abnormal (kubelet turns that into an
   * Event on the pod) until it is deleted: its tenant found a way out once.
   */
  async warning(record: VolumeRecord): Promise<string | undefined> {
    return this.caught.get(record.id);
  }

  /**
   * The volumes directory, checked on every call (directoryProblem: no trip through the thread
   * pool), then whether the quotas still hold, from the last check: that one runs the
   * filesystem's quota tool (tens of milliseconds, seconds under load), so the pool's full
   * refresh runs it again in the background (HealthCache); a Probe runs no tool.
   */
  async healthProblem(): Promise<string | undefined> {
    const problem = directoryProblem(this.volumesDir);
    if (problem !== undefined) return `pool ${this.config.name}: ${problem}`;
    return this.quotaHealth.current();
  }
}
