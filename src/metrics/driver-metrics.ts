// Prometheus metrics of one node driver: per-RPC counts and latencies, per-pool figures, process metrics.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { RpcObserver } from '../driver/rpc/observer.js';
import type { PoolStats, PoolStatsSource } from '../pool/pool-stats.js';
import { packageVersion } from '../util/version.js';
import { METRIC_NAMES } from './metric-names.js';

/** Identity of the driver, attached to every series so figures from many nodes can be told apart. */
export interface DriverMetricsOptions {
  driverName: string;
  nodeId: string;
}

export { METRIC_NAMES };

// From sub-millisecond identity calls to mkfs and resize of large volumes, which take seconds.
const RPC_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

/** The period of the event-loop lag samples behind nodejs_eventloop_lag_* (see the constructor). */
export const EVENT_LOOP_SAMPLE_MS = 100;

/** Reduces "/csi.v1.Node/NodeStageVolume" to "NodeStageVolume" so the label reads the same however the caller names it. */
export function shortMethodName(method: string): string {
  const slash = method.lastIndexOf('/');
  return slash >= 0 ? method.slice(slash + 1) : method;
}

/**
 * Holds the driver's own registry (never the global one, so tests and several drivers in one
 * process do not collide) and turns RPC notifications and pool figures into metrics.
 *
 * @example
 * const metrics = new DriverMetrics(pools, { driverName: 'lode.csi.dev', nodeId: 'node-1' });
 * metrics.onRpc('/csi.v1.Controller/CreateVolume', 'OK', 0.012);
 * const text = await metrics.metrics();
 */
export class DriverMetrics implements RpcObserver {
  readonly registry: Registry;
  private readonly rpcTotal: Counter<'method' | 'code'>;
  private readonly rpcDuration: Histogram<'method' | 'code'>;
  // Pool figures of the scrape in progress: one poolStats() call per scrape keeps the pool gauges consistent.
  private scrapeSnapshot: PoolStats[] | undefined;

  constructor(private readonly pools: PoolStatsSource, opts?: DriverMetricsOptions) {
    this.registry = new Registry();
    if (opts) {
      // driver_name/node_id rather than driver/node: Kubernetes service discovery commonly adds a
      // `node` label of its own, and a clash would rename ours to exported_node.
      this.registry.setDefaultLabels({ driver_name: opts.driverName, node_id: opts.nodeId });
    }
    // Unprefixed process_* and nodejs_* names on purpose: generic dashboards and alerts expect them.
    // The event-loop lag is sampled by a timer of this period; prom-client's default, 10 ms, woke
    // an idle driver about 100 times a second: 3.3 ms of CPU a second against 1.7 ms at 100 ms,
    // paid by each of a bench machine's drivers (npm run bench (f), docs/benchmarks.md#idle-drivers).
    // A stall shorter than the period can go unseen;
    // one that matters to a CSI call (tens of milliseconds and up) still shows.
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });

    this.rpcTotal = new Counter({
      name: METRIC_NAMES.rpcTotal,
      help: 'CSI calls finished, by method and gRPC status code.',
      labelNames: ['method', 'code'],
      registers: [this.registry],
    });
    this.rpcDuration = new Histogram({
      name: METRIC_NAMES.rpcDuration,
      help: 'Wall time of CSI calls in seconds, by method and gRPC status code.',
      labelNames: ['method', 'code'],
      buckets: RPC_BUCKETS,
      registers: [this.registry],
    });

    this.poolGauge(METRIC_NAMES.poolCapacity, 'Bytes the pool may hand out in total.', (p) => p.capacityBytes);
    this.poolGauge(METRIC_NAMES.poolAllocated, 'Bytes promised to existing volumes.', (p) => p.allocatedBytes);
    this.poolGauge(METRIC_NAMES.poolAvailable, 'Bytes still available for new volumes or expansion.', (p) => p.availableBytes);
    this.poolGauge(METRIC_NAMES.poolVolumes, 'Volumes that exist in the pool.', (p) => p.volumes);
    this.poolGauge(METRIC_NAMES.poolSnapshots, 'Snapshots the pool holds.', (p) => p.snapshots?.count ?? 0);
    this.poolGauge(METRIC_NAMES.poolSnapshotBytes, 'Bytes charged for the pool\'s snapshots (part of the allocated bytes).', (p) => p.snapshots?.chargedBytes ?? 0);
    // Always present (0 when none), so an alert on > 0 needs no absent() companion.
    this.poolGauge(
      METRIC_NAMES.quarantinedVolumes,
      'Volumes found at start-up, or by a create in its new object\'s place, whose record is unusable or missing: not served, not deleted, their space still taken.',
      (p) => p.quarantinedVolumes,
    );
    this.poolInfo();
    // Only for pools whose volumes are thin: a full thin pool fails writes inside every pod on it.
    this.poolGauge(METRIC_NAMES.thinDataUsed, 'How full the thin pool\'s data is, 0 to 1 (lvm thin pools only).', (p) => p.thinPool && p.thinPool.dataPercent / 100);
    this.poolGauge(METRIC_NAMES.thinMetadataUsed, 'How full the thin pool\'s metadata is, 0 to 1 (lvm thin pools only).', (p) => p.thinPool && p.thinPool.metadataPercent / 100);
    // Always present, so "which pools trust their tenants" is one query; the log and docs say how.
    this.poolGauge(
      METRIC_NAMES.limitEscapable,
      '1 when a writer of a volume can put more than the volume\'s size onto the pool (a quota directory on a shared filesystem), 0 when each volume is a device or filesystem of its own size.',
      (p) => (p.escapableBy !== undefined ? 1 : 0),
    );
    this.limitEscapesCounter();
    // The usual build-info form: joins on version in PromQL, and `kubectl lode status` shows it per node.
    new Gauge({
      name: METRIC_NAMES.buildInfo,
      help: 'Always 1; version is the running driver\'s release (its package.json version).',
      labelNames: ['version'],
      registers: [this.registry],
    }).set({ version: packageVersion() }, 1);
  }

  /** A counter whose value the pools keep (it restarts with the driver, as a counter may). */
  private limitEscapesCounter(): void {
    const counter: Counter<'pool' | 'backend'> = new Counter({
      name: METRIC_NAMES.limitEscapes,
      help: 'Writers found past their volume\'s limit (a subvolume made outside it) and put back under it, since the driver started.',
      labelNames: ['pool', 'backend'],
      registers: [this.registry],
      collect: () => {
        counter.reset();
        for (const pool of this.scrapeSnapshot ?? this.pools.poolStats()) counter.inc({ pool: pool.name, backend: pool.backend }, pool.limitEscapes ?? 0);
      },
    });
  }

  /**
   * 1 per pool, labelled with how its data reaches the disk: an info metric rather than a label
   * on every gauge, so a fallback to buffered I/O does not start new series for all of them.
   */
  private poolInfo(): void {
    const gauge: Gauge<'pool' | 'backend' | 'data_path'> = new Gauge({
      name: METRIC_NAMES.poolInfo,
      help: 'Always 1; data_path says how volume data reaches the disk (direct-io, buffered, or buffered-fallback when direct I/O was refused).',
      labelNames: ['pool', 'backend', 'data_path'],
      registers: [this.registry],
      collect: () => {
        gauge.reset();
        for (const pool of this.scrapeSnapshot ?? this.pools.poolStats()) {
          gauge.set({ pool: pool.name, backend: pool.backend, data_path: pool.dataPath }, 1);
        }
      },
    });
  }

  onRpc(method: string, code: string, seconds: number): void {
    const labels = { method: shortMethodName(method), code };
    this.rpcTotal.inc(labels);
    // A clock step can make a duration negative; a histogram must never get one.
    this.rpcDuration.observe(labels, Math.max(0, seconds));
  }

  /** The exposition text of every metric, pools read once at this instant. */
  async metrics(): Promise<string> {
    this.scrapeSnapshot = this.pools.poolStats();
    try {
      return await this.registry.metrics();
    } finally {
      this.scrapeSnapshot = undefined;
    }
  }

  /** The Content-Type header to send with `metrics()`. */
  get contentType(): string {
    return this.registry.contentType;
  }

  /** A gauge per pool; a pool for which `value` is undefined has no series. */
  private poolGauge(name: string, help: string, value: (pool: PoolStats) => number | undefined): void {
    const gauge: Gauge<'pool' | 'backend'> = new Gauge({
      name,
      help,
      labelNames: ['pool', 'backend'],
      registers: [this.registry],
      // Runs at scrape time; reset first so a pool removed from the configuration stops being reported.
      collect: () => {
        gauge.reset();
        for (const pool of this.scrapeSnapshot ?? this.pools.poolStats()) {
          const v = value(pool);
          if (v !== undefined) gauge.set({ pool: pool.name, backend: pool.backend }, v);
        }
      },
    });
  }
}
