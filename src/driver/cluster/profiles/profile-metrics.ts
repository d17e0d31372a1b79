// The pool profiles' figures as Prometheus series on the driver's registry, read at scrape time.
import { Counter, Gauge, type Registry } from 'prom-client';
import type { PoolStatsSource } from '../../../pool/pool-stats.js';
import type { ProfileFigures } from './profile-reload.js';

export const PROFILE_METRIC_NAMES = {
  refused: 'lode_pool_change_refused',
  added: 'lode_pools_added_total',
} as const;

/** Every open pool has the gauge (0 unless a change of it is refused), so an alert on 1 needs no absent(). */
export function registerProfileMetrics(registry: Registry, figures: ProfileFigures, pools: PoolStatsSource): void {
  const refused: Gauge<'pool'> = new Gauge({
    name: PROFILE_METRIC_NAMES.refused,
    help: '1 while a change of the pool configuration (profile or entry) that would drop, move or shrink this pool, which holds volumes, is refused; the pool keeps serving as before.',
    labelNames: ['pool'], registers: [registry],
    collect: () => {
      refused.reset();
      const now = figures.refusedPools();
      for (const p of pools.poolStats()) refused.set({ pool: p.name }, now.has(p.name) ? 1 : 0);
    },
  });
  const added: Counter = new Counter({
    name: PROFILE_METRIC_NAMES.added,
    help: 'Pools opened while the driver ran, because its pool configuration (profile or entry) added them.',
    registers: [registry],
    collect: () => {
      added.reset();
      added.inc(figures.added);
    },
  });
}
