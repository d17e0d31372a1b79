// The orphan check's figures as Prometheus series on the driver's registry, read from the check at scrape time.
import { Counter, Gauge, type Registry } from 'prom-client';
import type { PoolStatsSource } from '../../../pool/pool-stats.js';
import type { OrphanFigures } from './orphan-check.js';

export const ORPHAN_METRIC_NAMES = {
  volumes: 'lode_orphan_volumes',
  bytes: 'lode_orphan_volume_bytes',
  checks: 'lode_orphan_checks_total',
  deleted: 'lode_orphan_volumes_deleted_total',
} as const;

/** Registers the series; every pool has them (0 when it has no orphan), so an alert on > 0 needs no absent(). */
export function registerOrphanMetrics(registry: Registry, figures: OrphanFigures, pools: PoolStatsSource): void {
  const perPool = (name: string, help: string, value: (pool: string) => number): void => {
    const gauge: Gauge<'pool' | 'backend'> = new Gauge({
      name, help, labelNames: ['pool', 'backend'], registers: [registry],
      collect: () => {
        gauge.reset();
        for (const p of pools.poolStats()) gauge.set({ pool: p.name, backend: p.backend }, value(p.name));
      },
    });
  };
  perPool(ORPHAN_METRIC_NAMES.volumes, 'Volumes of the pool that no PersistentVolume has named for the grace period (--orphan-grace).', (pool) => figures.byPool().get(pool)?.volumes ?? 0);
  perPool(ORPHAN_METRIC_NAMES.bytes, 'Bytes those orphaned volumes hold.', (pool) => figures.byPool().get(pool)?.bytes ?? 0);
  const checks: Counter<'outcome'> = new Counter({
    name: ORPHAN_METRIC_NAMES.checks,
    help: 'Orphan checks, by outcome: complete (every PersistentVolume read) or skipped (the API did not answer in full; nothing learnt).',
    labelNames: ['outcome'], registers: [registry],
    collect: () => {
      checks.reset();
      checks.inc({ outcome: 'complete' }, figures.checks.complete);
      checks.inc({ outcome: 'skipped' }, figures.checks.skipped);
    },
  });
  const deleted: Counter<'pool' | 'backend'> = new Counter({
    name: ORPHAN_METRIC_NAMES.deleted,
    help: 'Orphaned volumes deleted (--delete-orphans).',
    labelNames: ['pool', 'backend'], registers: [registry],
    collect: () => {
      deleted.reset();
      for (const p of pools.poolStats()) deleted.inc({ pool: p.name, backend: p.backend }, figures.deletedByPool.get(p.name) ?? 0);
    },
  });
}
