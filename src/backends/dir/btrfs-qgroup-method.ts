// Quota directories on btrfs: each volume a subvolume whose whole tree (its own subvolume and every one made inside it) is held to its size by a level-1 qgroup.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { VolumeUsage } from '../../pool/backend.js';
import { StorageOccupiedError } from '../../pool/occupied.js';
import type { VolumeRecord } from '../../pool/volume-record.js';
import {
  assignQgroup, btrfsQuotaEnabled, btrfsQuotaHowTo, btrfsQuotaMode, createQgroup, createSubvolume, deleteSubvolumeTree, destroyQgroup, groupQgroup,
  isSubvolume, listSubvolumes, ownQgroupOf, qgroupReport, removeQgroupRelation, setQgroupLimit, subvolumeId, subvolumeQgroup, type QgroupFigures,
} from '../../sys/btrfs.js';
import { run } from '../../sys/exec.js';
import { entryAt, kindOf } from '../../sys/entry-at.js';
import { LIMIT_GRANULE, type FoundDirectory, type QuotaMethod, type Survey, type VolumesPlace } from './quota-method.js';

/**
 * Why a limit on the volume's own subvolume is not enough, since every user may make a subvolume inside
 * a directory it can write (`btrfs subvolume create` needs no privilege; so does a snapshot of a
 * subvolume it owns), and that subvolume has a qgroup of its own, outside the volume's.
 *
 * With simple quotas (squota) each volume gets a group, `1/<its subvolume id>`, holding the
 * limit, with its subvolume as a member: btrfs checks a write against every group above the
 * subvolume written to, and a subvolume made inside a volume joins the volume's groups by
 * itself. Its creator may still name other groups (`-i`): the survey at each refresh puts such
 * a subvolume back under its volume's group.
 *
 * With full qgroups a new subvolume joins no group, and a snapshot of a subvolume in a group
 * leaves every figure inconsistent until a rescan of the whole filesystem, so volumes get no
 * group: the survey at each refresh finds subvolumes made inside a volume and freezes each at
 * what it holds (its referenced and exclusive limits set to its figures), and the volume's
 * usage counts them. Either way an escape lasts until the next refresh, and is reported.
 */
const ESCAPE = {
  full: 'a writer can make a subvolume inside its volume (btrfs subvolume create needs no privilege), which full qgroups hold to no limit until the next refresh freezes it',
  simple: 'a writer can make a subvolume inside its volume naming another qgroup (btrfs subvolume create -i needs no privilege), which escapes its volume\'s group until the next refresh puts it back',
} as const;

export class BtrfsQgroupMethod implements QuotaMethod {
  readonly fsType = 'btrfs';
  readonly usesProjectIds = false;
  private mode: Promise<'simple' | 'full'> | undefined;
  /**
   * Qgroup changes one after another: a survey working from its report must not put a subvolume
   * back under the group of a volume being deleted (whose group is then busy and cannot go).
   */
  private queue: Promise<unknown> = Promise.resolve();
  /** Subvolumes made inside volumes that this process froze (full qgroups), so each is reported once. */
  private readonly frozenHere = new Set<number>();

  constructor(private readonly place: VolumesPlace) {}

  private get mountPoint(): string {
    return this.place.containing.mount.mountPoint;
  }

  /** The filesystem's quota mode, read once (changing it means turning quotas off and on, which drops every limit). */
  private quotaMode(): Promise<'simple' | 'full'> {
    this.mode ??= btrfsQuotaMode(this.place.containing.mount.source);
    return this.mode;
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.queue.then(fn, fn);
    this.queue = next.catch(() => undefined);
    return next;
  }

  async unenforced(): Promise<string | undefined> {
    if (await btrfsQuotaEnabled(this.place.dir)) return undefined;
    return btrfsQuotaHowTo(this.mountPoint);
  }

  async escapableBy(): Promise<string> {
    return ESCAPE[await this.quotaMode()];
  }

  async create(dir: string, record: VolumeRecord): Promise<void> {
    // A subvolume there is an earlier attempt's under this record (the core found none before
    // writing it); anything else was never Lode's (btrfs makes a subvolume whole): refused.
    const st = await entryAt(dir);
    if (st !== undefined && !(await isSubvolume(dir))) throw new StorageOccupiedError(dir, `is ${kindOf(st)}, not a btrfs subvolume`);
    await createSubvolume(dir);
    await fs.chmod(dir, 0o755);
    await this.setLimit(dir, record);
  }

  /** The limit on the volume's own subvolume and, with simple quotas, on its group (made and joined here if missing). */
  async setLimit(dir: string, record: VolumeRecord): Promise<void> {
    if ((await this.quotaMode()) === 'simple') {
      const id = await subvolumeId(dir);
      await this.serial(async () => {
        await createQgroup(groupQgroup(id), this.mountPoint);
        await assignQgroup(subvolumeQgroup(id), groupQgroup(id), this.mountPoint);
        await setQgroupLimit(this.mountPoint, record.capacityBytes, groupQgroup(id));
      });
    }
    await setQgroupLimit(dir, record.capacityBytes);
  }

  /** A path as btrfs lists subvolumes (from the filesystem's top level) as seen through the pool's mount. */
  private hostPath(fsPath: string): string {
    const { mount } = this.place.containing;
    const below = path.posix.relative(mount.root, fsPath);
    if (below.startsWith('..')) throw new Error(`subvolume ${fsPath} is outside the mount at ${mount.mountPoint}`);
    return path.join(mount.mountPoint, below);
  }

  async remove(dir: string): Promise<void> {
    if ((await entryAt(dir)) === undefined) return;
    // A subvolume goes with its qgroup's limit; anything else in its place (a directory a
    // crash or an operator left) is removed without following links or crossing filesystems.
    if (!(await isSubvolume(dir))) {
      await run('rm', ['-rf', '--one-file-system', '--', dir]);
      return;
    }
    // With full qgroups Lode makes no groups (setLimit), and the mode cannot change under a
    // volume without dropping every qgroup: the subvolume goes, with no id to look up and no
    // report to read for members of a group that does not exist.
    if ((await this.quotaMode()) === 'full') {
      await this.serial(() => deleteSubvolumeTree(dir, (p) => this.hostPath(p)));
      return;
    }
    const id = await subvolumeId(dir);
    await this.serial(async () => {
      // The group first (it cannot go while it has members), then the subvolumes: a crash in
      // between leaves a subvolume still held by its own limit, which a retry deletes.
      const group = groupQgroup(id);
      const report = await qgroupReport(this.mountPoint);
      if (report.has(group)) {
        for (const [qgroup, figures] of report) if (figures.parents.includes(group)) await removeQgroupRelation(qgroup, group, this.mountPoint);
        await destroyQgroup(group, this.mountPoint);
      }
      await deleteSubvolumeTree(dir, (p) => this.hostPath(p));
    });
  }

  async usage(dir: string, record: VolumeRecord): Promise<VolumeUsage> {
    // statfs on a subvolume answers for the whole filesystem; the qgroups hold the volume's
    // figures (they follow writes at each transaction commit, every 30 s by default),
    // subvolumes made inside it included.
    const [tree, s] = await Promise.all([this.treeFigures(dir), fs.statfs(dir)]);
    const totalBytes = tree?.limitBytes ?? record.capacityBytes;
    const usedBytes = tree?.referencedBytes ?? 0;
    return { totalBytes, usedBytes, availableBytes: Math.max(0, Math.min(totalBytes - usedBytes, s.bavail * s.bsize)) };
  }

  /** The figures of the volume whose subvolume is `dir`, with every subvolume made inside it; undefined when btrfs has none. */
  private async treeFigures(dir: string): Promise<QgroupFigures | undefined> {
    const [id, report] = await Promise.all([subvolumeId(dir), qgroupReport(this.mountPoint)]);
    const own = report.get(subvolumeQgroup(id));
    const group = report.get(groupQgroup(id));
    if (group !== undefined || own === undefined) return group ?? own;
    // No group adds them up (full qgroups): the subvolumes below the volume's own are found by path.
    const subvolumes = await listSubvolumes(this.mountPoint);
    const rootPath = [...subvolumes].find(([, sid]) => sid === id)?.[0];
    const nested = rootPath === undefined ? [] : [...subvolumes].filter(([p]) => p.startsWith(`${rootPath}/`)).map(([, sid]) => report.get(subvolumeQgroup(sid)));
    return sumFigures(own, nested);
  }

  async problem(dir: string, record: VolumeRecord): Promise<string | undefined> {
    if (!(await isSubvolume(dir))) return `volume directory ${dir} is not a btrfs subvolume, so no qgroup holds it to its size`;
    // One query for the subvolume's own qgroup, found by its path: staging asks this of every
    // volume, and looking its id up first (inspect-internal rootid) was a second tool run.
    const limitBytes = (await ownQgroupOf(dir))?.limitBytes;
    if (limitBytes === undefined) return `subvolume ${dir} has no qgroup limit (expected ${record.capacityBytes} bytes)`;
    if (Math.abs(limitBytes - record.capacityBytes) >= LIMIT_GRANULE) {
      return `subvolume ${dir} has a qgroup limit of ${limitBytes} bytes, expected ${record.capacityBytes}`;
    }
    return undefined;
  }

  async inspect(dir: string): Promise<FoundDirectory> {
    // A plain directory is charged to the subvolume holding it: no figure of its own.
    if (!(await isSubvolume(dir))) return { bytes: 0 };
    const q = await this.treeFigures(dir);
    return { bytes: q?.limitBytes ?? q?.referencedBytes ?? 0 };
  }

  /** With simple quotas, volumes recorded before groups existed get theirs: until then a subvolume made inside one escapes it for good. */
  async prepare(records: readonly VolumeRecord[], dirOf: (r: VolumeRecord) => string): Promise<void> {
    if ((await this.quotaMode()) !== 'simple') return;
    const report = await qgroupReport(this.mountPoint);
    for (const r of records) {
      const dir = dirOf(r);
      if (r.state !== 'ready' || !(await isSubvolume(dir).catch(() => false))) continue;
      if (!report.has(groupQgroup(await subvolumeId(dir)))) await this.setLimit(dir, r);
    }
  }

  /**
   * Two queries whatever the number of volumes: subvolume ids by path, then every qgroup. A
   * subvolume made inside a volume and not held with it is put back under the volume's group
   * (simple quotas) or frozen at what it holds (full qgroups), and reported.
   */
  survey(volumes: ReadonlyMap<string, number | undefined>): Promise<Survey> {
    return this.serial(async () => {
      const used = new Map<string, number>();
      const caught = new Map<string, string>();
      if (volumes.size === 0) return { used, caught };
      const simple = (await this.quotaMode()) === 'simple';
      const subvolumes = await listSubvolumes(this.mountPoint);
      const report = await qgroupReport(this.mountPoint);
      const volumesPath = this.place.containing.pathInFilesystem;
      // Each volume's own subvolume, and the ones made inside it.
      const trees = new Map<string, { root?: number; nested: Array<[string, number]> }>();
      for (const [p, id] of subvolumes) {
        const below = path.posix.relative(volumesPath, p);
        const volume = below.split('/')[0];
        if (below.startsWith('..') || volume === undefined || !volumes.has(volume)) continue;
        const tree = trees.get(volume) ?? { nested: [] };
        if (below === volume) tree.root = id;
        else tree.nested.push([p, id]);
        trees.set(volume, tree);
      }
      for (const [volume, { root, nested }] of trees) {
        if (root === undefined) continue;
        const own = report.get(subvolumeQgroup(root));
        const group = report.get(groupQgroup(root));
        // Exclusive, not referenced: extents a volume shares with a snapshot or a clone are not
        // its own, and rewriting them takes new space (the same as referenced when nothing is shared).
        const figures = group ?? sumFigures(own, nested.map(([, id]) => report.get(subvolumeQgroup(id))));
        if (figures !== undefined) used.set(volume, figures.exclusiveBytes);
        const found: string[] = [];
        for (const [p, id] of nested) {
          const q = report.get(subvolumeQgroup(id));
          if (q === undefined) continue;
          const where = this.hostPath(p);
          if (simple) {
            // A volume still being made has no group yet: nothing to join.
            if (group === undefined || (q.parents.length === 1 && q.parents[0] === groupQgroup(root))) continue;
            for (const other of q.parents) if (other !== groupQgroup(root)) await removeQgroupRelation(subvolumeQgroup(id), other, this.mountPoint);
            await assignQgroup(subvolumeQgroup(id), groupQgroup(root), this.mountPoint);
            found.push(`subvolume ${where} (${q.referencedBytes} bytes, ${q.parents.length > 0 ? `in qgroup ${q.parents.join(',')}` : 'in no group'}) was put under the volume's qgroup ${groupQgroup(root)}`);
          } else {
            if (frozen(q)) continue;
            await setQgroupLimit(this.mountPoint, roundUp(q.referencedBytes), subvolumeQgroup(id));
            await setQgroupLimit(this.mountPoint, roundUp(q.exclusiveBytes), subvolumeQgroup(id), true);
            // Tightened again after its writer deleted some of it, or a snapshot of a frozen one
            // (btrfs copies the limits, not the figures): said once per subvolume.
            if (this.frozenHere.has(id)) continue;
            this.frozenHere.add(id);
            found.push(`subvolume ${where} (${q.referencedBytes} bytes) was frozen at what it holds`);
          }
        }
        if (found.length > 0) caught.set(volume, `a writer made subvolumes inside the volume that its limit did not hold: ${found.join('; ')}; what they hold counts against the volume`);
      }
      return { used, caught };
    });
  }

  async projectIdsInUse(): Promise<number[]> {
    return [];
  }
}

/** A subvolume held at what it holds: both its limits no more than its figures (to the limits' granule). */
function frozen(q: QgroupFigures): boolean {
  return q.limitBytes !== undefined && q.exclusiveLimitBytes !== undefined
    && q.limitBytes <= roundUp(q.referencedBytes) + LIMIT_GRANULE && q.exclusiveLimitBytes <= roundUp(q.exclusiveBytes) + LIMIT_GRANULE;
}

const roundUp = (bytes: number): number => Math.ceil(bytes / LIMIT_GRANULE) * LIMIT_GRANULE;

/** A volume's figures with those of the subvolumes made inside it (full qgroups, where no group adds them up); its limit is its own. */
function sumFigures(own: QgroupFigures | undefined, nested: ReadonlyArray<QgroupFigures | undefined>): QgroupFigures | undefined {
  if (own === undefined) return undefined;
  const sum = { ...own };
  for (const q of nested) {
    if (q === undefined) continue;
    sum.referencedBytes += q.referencedBytes;
    sum.exclusiveBytes += q.exclusiveBytes;
  }
  return sum;
}
