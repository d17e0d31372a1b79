// With API access and pool profiles: follows the node's profile label and the --pool-config directory while the driver runs, opening new pools at once and refusing (Event and metric) any change that would drop or shrink a pool holding volumes.
import { createBackend } from '../../../backends/registry.js';
import type { VolumeCatalog } from '../../../catalog/volume-catalog.js';
import type { KubeClient } from '../../../kube/kube-client.js';
import { NodeEvents } from '../../../kube/node-events.js';
import type { PoolConfig } from '../../../pool/pool.js';
import { log } from '../../../util/log.js';
import { NodeLabelCache } from './node-label-cache.js';
import { planPoolChange, type PoolHolding } from './pool-change-plan.js';
import type { PoolProfileSource } from './pool-source.js';

export const REASON_POOL_CHANGE_REFUSED = 'PoolChangeRefused';
export const REASON_POOL_ADDED = 'PoolAdded';

/** The pause between rounds until the Node's label has been read once. */
const FIRST_READ_RETRY_MS = 1_000;

/** What the reloads found, for the metrics. */
export interface ProfileFigures {
  /** Pools whose change is refused now (the gauge is 1 for each). */
  refusedPools(): ReadonlySet<string>;
  /** Pools opened while the driver ran. */
  readonly added: number;
}

export class ProfileReload implements ProfileFigures {
  private readonly events: NodeEvents;
  private readonly label: NodeLabelCache;
  private refused = new Set<string>();
  private deferred = new Set<string>();
  private refusals = new Set<string>();
  added = 0;
  private running = false;
  private stopped = false;
  /** Whether a round has read the Node's label yet. */
  private labelRead = false;
  private readFailing = false;
  private readonly failedOpen = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  /** The configurations of the open pools, as they were opened. */
  private readonly open: PoolConfig[];

  constructor(
    private readonly catalog: VolumeCatalog,
    kube: KubeClient,
    nodeId: string,
    private readonly source: PoolProfileSource,
    opened: readonly PoolConfig[],
  ) {
    this.events = new NodeEvents(kube, nodeId);
    this.label = new NodeLabelCache(kube, nodeId, source.labelKey);
    this.open = [...opened];
  }

  refusedPools(): ReadonlySet<string> {
    return this.refused;
  }

  /**
   * Runs a round whenever the Node changes (its watch), every `periodMs` for the directory,
   * and every second until the label has been read once (a driver that started before its
   * Node could be read gets its pools soon after); unref'd, so it never keeps a stopping
   * process alive.
   */
  start(periodMs: number): void {
    this.label.start(() => { if (!this.stopped) void this.round(); });
    const next = (): void => {
      this.timer = setTimeout(() => void this.round().finally(() => { if (!this.stopped) next(); }), this.labelRead ? periodMs : Math.min(periodMs, FIRST_READ_RETRY_MS));
      this.timer.unref();
    };
    next();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    void this.label.stop();
  }

  private holding(pool: string): PoolHolding {
    const s = this.catalog.statsOf(pool);
    return { volumes: s.volumes, snapshots: s.snapshots?.count ?? 0, quarantined: s.quarantinedVolumes, allocatedBytes: s.allocatedBytes };
  }

  /**
   * One look at the label and the directory; a round still running is not doubled. Never
   * throws: an API or a directory in trouble leaves the pools as they are until the next round.
   */
  async round(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      let value: string | undefined;
      try {
        value = this.label.value();
      } catch (err) {
        // Said once until a read succeeds: before the label is first read the rounds come every second.
        if (!this.readFailing) log('warn', 'pool profiles: cannot read this node\'s labels; pools unchanged', { error: (err as Error).message });
        this.readFailing = true;
        return;
      }
      this.readFailing = false;
      this.labelRead = true;
      let chosen;
      try {
        chosen = await this.source.choose(value);
      } catch (err) {
        log('warn', 'pool profiles: the pool configuration is not usable; pools unchanged', { error: (err as Error).message });
        return;
      }
      // No entry applies any more: as if every pool were dropped, which is refused for those holding volumes.
      const wanted = chosen ?? { entry: '(none)', pools: [] };
      const plan = planPoolChange(this.open, wanted.pools, (p) => this.holding(p));
      for (const config of plan.add) {
        if (this.failedOpen.has(config.name)) continue;
        try {
          await this.catalog.addPool(createBackend(config));
        } catch (err) {
          // A pool that failed part-way through opening is not tried again while the driver runs
          // (the catalog may hold part of it); a restart opens it from the start.
          this.failedOpen.add(config.name);
          log('error', 'pool profiles: could not open a new pool; a restart of the driver tries again', { pool: config.name, error: (err as Error).message });
          continue;
        }
        this.open.push(config);
        this.added++;
        await this.source.recordOpened(this.open).catch((err: unknown) => log('warn', 'pool profiles: could not record the pools open', { error: (err as Error).message }));
        log('info', 'pool profiles: pool added', { pool: config.name, dir: config.dir, entry: wanted.entry });
        await this.events.report('Normal', REASON_POOL_ADDED, config.name, `pool ${config.name} (${config.backend} ${config.dir}) added from pool configuration entry ${wanted.entry}`);
      }
      const refused = new Set<string>();
      for (const r of plan.refused) {
        refused.add(r.pool);
        // One Event per pool and kind of change (a shrink, then a drop of the same pool, are two;
        // a new volume in the pool, which changes the figures in the text, is not a new one).
        if (!this.refusals.has(r.reason)) log('error', 'pool profiles: change refused; the pool keeps serving as before', { pool: r.pool, entry: wanted.entry, reason: r.reason });
        await this.events.report('Warning', REASON_POOL_CHANGE_REFUSED, `${r.pool}\0${r.kind ?? ''}`, `${r.reason} (entry ${wanted.entry}): refused, the pool keeps serving as before; move or delete its volumes first, see docs/driver.md, "Pool profiles"`);
      }
      this.refused = refused;
      this.refusals = new Set(plan.refused.map((r) => r.reason));
      // Said once per change, not every round.
      const deferred = new Set(plan.deferred.map((d) => d.reason));
      for (const d of plan.deferred) if (!this.deferred.has(d.reason)) log('info', 'pool profiles: change left to the next start', { pool: d.pool, reason: d.reason });
      this.deferred = deferred;
    } finally {
      this.running = false;
    }
  }
}
