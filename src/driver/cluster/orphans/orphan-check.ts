// Each node's periodic look for its orphaned volumes: compare the catalog with the PVs (a watched cache, no request per look), report what no PV names for the grace period, delete only when asked.
import { holdersOf } from '../../mount/holders.js';
import type { KeyedLocks } from '../../rpc/locks.js';
import type { KubeClient } from '../../../kube/kube-client.js';
import { humanBytes } from '../../../util/quantity.js';
import { log } from '../../../util/log.js';
import { NodeEvents } from '../../../kube/node-events.js';
import type { VolumeCatalog } from '../../../catalog/volume-catalog.js';
import type { CreateAnswers } from './create-answers.js';
import type { OrphanOptions } from './orphan-options.js';
import { checkable, OrphanTracker, type Candidate } from './orphan-tracker.js';
import { PvHandles } from './pv-handles.js';

/** The first look comes this soon after start, so an orphan's clock starts early; later ones every --orphan-check. */
const FIRST_CHECK_DELAY_MS = 5_000;

export const REASON_ORPHANED = 'OrphanedVolume';
export const REASON_IN_USE = 'OrphanedVolumeInUse';
export const REASON_DELETED = 'OrphanedVolumeDeleted';

/** A reported orphan, and what kept it from being deleted, if anything did. */
interface Reported {
  candidate: Candidate;
  inUse?: string[];
}

/** What the metrics read, at scrape time. */
export interface OrphanFigures {
  /** Reported orphans and their bytes, by pool. */
  byPool(): Map<string, { volumes: number; bytes: number }>;
  checks: { complete: number; skipped: number };
  deletedByPool: Map<string, number>;
}

/** What the check uses of the driver: its names, the catalog it looks through, the volume locks DeleteVolume takes, and CreateVolume's answers. */
export interface OrphanCheckDriver {
  readonly config: { readonly nodeId: string; readonly driverName: string };
  readonly topologyKey: string;
  readonly catalog: VolumeCatalog;
  readonly locks: KeyedLocks;
  readonly createAnswers: CreateAnswers;
}

/** Whether this node's catalog holds the volume; a quarantined one (get throws) is this node's too. */
function holdsVolume(catalog: VolumeCatalog, id: string): boolean {
  try {
    return catalog.get(id) !== undefined;
  } catch {
    return true;
  }
}

export class OrphanCheck implements OrphanFigures {
  private readonly tracker: OrphanTracker;
  private readonly events: NodeEvents;
  private readonly pvs: PvHandles;
  private readonly reported = new Map<string, Reported>();
  /** Candidates whose clock start was logged. */
  private readonly announced = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  readonly checks = { complete: 0, skipped: 0 };
  readonly deletedByPool = new Map<string, number>();

  constructor(private readonly ctx: OrphanCheckDriver, kube: KubeClient, private readonly options: OrphanOptions) {
    this.tracker = new OrphanTracker(options.graceMs);
    this.events = new NodeEvents(kube, ctx.config.nodeId);
    this.pvs = new PvHandles(kube, { driverName: ctx.config.driverName, nodeId: ctx.config.nodeId, topologyKey: ctx.topologyKey, holds: (id) => holdsVolume(ctx.catalog, id) });
  }

  start(): void {
    this.pvs.start();
    log('info', 'orphan check on', { everySeconds: this.options.checkMs / 1000, graceSeconds: this.options.graceMs / 1000, deleteOrphans: this.options.delete });
    this.schedule(Math.min(FIRST_CHECK_DELAY_MS, this.options.checkMs));
  }

  /** Stops the timer and waits for a round in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
    await this.pvs.stop();
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    // unref: the timer never keeps a stopping process alive.
    this.timer = setTimeout(() => {
      this.running = this.round().catch((err: unknown) => log('error', 'orphan check failed', { error: (err as Error).message })).finally(() => {
        this.running = undefined;
        this.schedule(this.options.checkMs);
      });
    }, ms);
    this.timer.unref();
  }

  byPool(): Map<string, { volumes: number; bytes: number }> {
    const out = new Map<string, { volumes: number; bytes: number }>();
    for (const { candidate: c } of this.reported.values()) {
      const p = out.get(c.pool) ?? { volumes: 0, bytes: 0 };
      p.volumes += 1;
      p.bytes += c.bytes;
      out.set(c.pool, p);
    }
    return out;
  }

  /** One look: at the whole cache of the PVs, or nothing learnt at all. */
  async round(): Promise<void> {
    const { catalog, config } = this.ctx;
    const started = Date.now();
    const named = this.pvs.named();
    if ('notWhole' in named) {
      this.checks.skipped += 1;
      // "No answer" is never "no PVs": a round without a whole list of them changes nothing.
      log('warn', 'orphan check skipped: the PersistentVolumes could not be read in full; nothing is reported or deleted this round', { error: named.notWhole });
      return;
    }
    this.checks.complete += 1;
    const now = Date.now();
    const all = catalog.list();
    this.ctx.createAnswers.keepOnly(new Set(all.map((r) => r.id)));
    const due = this.tracker.observe(checkable(all), named.handles, now, (id) => this.ctx.createAnswers.lastFor(id));
    const watched = this.tracker.watched(now);
    for (const c of watched) {
      if (this.announced.has(c.id)) continue;
      this.announced.add(c.id);
      log('info', 'no PersistentVolume names this volume; it is reported if none does for the grace period', { id: c.id, name: c.name, pool: c.pool, graceSeconds: this.options.graceMs / 1000 });
    }
    const dueIds = new Set(due.map((c) => c.id));
    for (const id of this.announced) if (this.tracker.get(id) === undefined) this.announced.delete(id);
    for (const [id, r] of this.reported) {
      if (dueIds.has(id)) continue;
      this.reported.delete(id);
      log('info', 'volume no longer an orphan: a PersistentVolume names it again, or it is gone', { id, pool: r.candidate.pool });
    }
    // No PV of this driver at all, while this node has volumes: more likely a wrong
    // --driver-name or the wrong cluster than every PV force-deleted. Reported, not deleted.
    const deletable = this.options.delete && named.handles.size > 0;
    if (this.options.delete && !deletable && due.length > 0) {
      log('warn', 'no PersistentVolume names a volume of this driver at all; orphans are reported but not deleted', { driverName: config.driverName, pvs: named.pvs });
    }
    for (const c of due) {
      if (this.stopped) break;
      if (!this.reported.has(c.id)) {
        this.reported.set(c.id, { candidate: c });
        log('warn', 'orphaned volume: no PersistentVolume has named it for the grace period', {
          id: c.id, name: c.name, pool: c.pool, bytes: c.bytes, unnamedSince: new Date(c.unnamedSinceMs).toISOString(),
          action: this.options.delete ? 'deleted once nothing uses it' : 'none (--delete-orphans is off)',
        });
      }
      await this.events.report('Warning', REASON_ORPHANED, c.id, this.message(c));
      if (deletable) await this.tryDelete(c);
    }
    log('debug', 'orphan check', { pvs: named.pvs, named: named.handles.size, volumes: all.length, watched: watched.length, orphans: due.length, ms: Date.now() - started });
  }

  private message(c: Candidate): string {
    const what = `volume ${c.id} (${c.name}) in pool ${c.pool}, ${humanBytes(c.bytes)}, is named by no PersistentVolume of ${this.ctx.config.driverName} since ${new Date(c.unnamedSinceMs).toISOString()}`;
    return `${what}; ${this.options.delete ? 'it is deleted once nothing uses it (--delete-orphans)' : 'not deleted: --delete-orphans is off'}`;
  }

  /**
   * Deletes a due orphan through the catalog, under the volume's lock, after checking again
   * what DeleteVolume checks: it is still a ready volume of this node's catalog, nothing
   * mounts it, no snapshot depends on it, and no CreateVolume answered it since the list.
   */
  private async tryDelete(c: Candidate): Promise<void> {
    const { catalog, locks } = this.ctx;
    try {
      await locks.with([c.id], async () => {
        const r = catalog.get(c.id);
        if (r === undefined || r.state !== 'ready' || r.ephemeral) return;
        const now = Date.now();
        const current = this.tracker.get(c.id);
        const lastCreate = this.ctx.createAnswers.lastFor(c.id);
        if (current === undefined || !this.tracker.isDue(current, now) || (lastCreate !== undefined && now - lastCreate < this.options.graceMs)) return;
        const backend = catalog.pool(r.pool);
        const uses = new Set<string>();
        if (r.staging !== null) uses.add(`staged at ${r.staging}`);
        for (const p of r.publications) uses.add(`published at ${p.targetPath}`);
        for (const m of await holdersOf(r, backend)) uses.add(`mounted at ${m}`);
        if (backend.snapshots?.independentSnapshots === false) {
          for (const s of catalog.snapshotsOf(r.id)) uses.add(`snapshot ${s.id} depends on it`);
        }
        if (uses.size > 0) {
          const reported = this.reported.get(c.id);
          const inUse = [...uses].sort();
          if (reported !== undefined && JSON.stringify(reported.inUse) !== JSON.stringify(inUse)) {
            reported.inUse = inUse;
            log('warn', 'orphaned volume is in use; not deleted', { id: c.id, pool: c.pool, uses: inUse });
          }
          await this.events.report('Warning', REASON_IN_USE, c.id, `orphaned volume ${c.id} in pool ${c.pool} is in use (${inUse.join(', ')}); not deleted`);
          return;
        }
        await catalog.destroy(r);
        this.reported.delete(c.id);
        this.deletedByPool.set(r.pool, (this.deletedByPool.get(r.pool) ?? 0) + 1);
        log('warn', 'orphaned volume deleted (--delete-orphans)', { id: r.id, name: r.name, pool: r.pool, bytes: r.capacityBytes });
        await this.events.report('Normal', REASON_DELETED, c.id, `deleted orphaned volume ${r.id} (${r.name}) in pool ${r.pool}, ${humanBytes(r.capacityBytes)}: no PersistentVolume had named it since ${new Date(c.unnamedSinceMs).toISOString()}`);
      });
    } catch (err) {
      log('warn', 'could not delete orphaned volume; trying again next round', { id: c.id, pool: c.pool, error: (err as Error).message });
    }
  }
}
