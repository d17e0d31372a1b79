// What a new pool list may change on a running driver: pools added now, changes that would drop or shrink a pool holding volumes refused, anything else left to the next start.
import type { PoolConfig } from '../../../pool/pool.js';

/** What a pool holds now; any of it makes dropping or shrinking the pool a loss. */
export interface PoolHolding {
  volumes: number;
  snapshots: number;
  quarantined: number;
  allocatedBytes: number;
}

export interface PoolChangeNote {
  pool: string;
  reason: string;
  /** What a refused change would have done: one Event per pool and kind, whatever the pool's figures. */
  kind?: 'drop' | 'move' | 'shrink';
}

export interface PoolChangePlan {
  /** New pools, opened at once: nothing of this node is in them yet. */
  add: PoolConfig[];
  /** Changes that would drop or shrink a pool holding volumes: never applied, reported. */
  refused: PoolChangeNote[];
  /** Other changes of existing pools, harmless but not applied while the driver runs (the pool is open): taken at the next start. */
  deferred: PoolChangeNote[];
}

function holds(h: PoolHolding): boolean {
  return h.volumes > 0 || h.snapshots > 0 || h.quarantined > 0 || h.allocatedBytes > 0;
}

function describe(h: PoolHolding): string {
  const parts = [`${h.volumes} volume(s)`];
  if (h.snapshots > 0) parts.push(`${h.snapshots} snapshot(s)`);
  if (h.quarantined > 0) parts.push(`${h.quarantined} quarantined`);
  return `${parts.join(', ')}, ${h.allocatedBytes} bytes`;
}

/** Fields of a pool's configuration that say where its data is and how much room it has. */
function sizeText(c: PoolConfig): string {
  return c.sizeBytes !== undefined ? `${c.sizeBytes} bytes` : 'its filesystem';
}

function inside(a: string, b: string): boolean {
  return a === b || a.startsWith(b.endsWith('/') ? b : `${b}/`);
}

/**
 * Compares the pools the driver runs (`current`) with the ones the configuration now names
 * (`wanted`). A pool holding anything may not go, move (another directory, backend or volume
 * group: its data would be left behind) or get a smaller size; a sized pool may not lose its
 * size either (it would follow its filesystem, which may hold less). Refusing keeps the pool
 * open and serving exactly as before.
 */
export function planPoolChange(current: readonly PoolConfig[], wanted: readonly PoolConfig[], holding: (pool: string) => PoolHolding): PoolChangePlan {
  const plan: PoolChangePlan = { add: [], refused: [], deferred: [] };
  const byName = new Map(wanted.map((w) => [w.name, w]));
  for (const c of current) {
    const w = byName.get(c.name);
    const h = holding(c.name);
    if (w === undefined) {
      if (holds(h)) plan.refused.push({ pool: c.name, kind: 'drop', reason: `the new pool list drops pool ${c.name}, which holds ${describe(h)}` });
      else plan.deferred.push({ pool: c.name, reason: `pool ${c.name} is no longer listed; it is empty and closes at the next start` });
      continue;
    }
    if (JSON.stringify(w) === JSON.stringify(c)) continue;
    const moved = w.dir !== c.dir || w.backend !== c.backend || JSON.stringify(w.lvm) !== JSON.stringify(c.lvm);
    const shrunk = c.sizeBytes !== undefined && (w.sizeBytes === undefined || w.sizeBytes < c.sizeBytes);
    if (holds(h) && moved) {
      plan.refused.push({ pool: c.name, kind: 'move', reason: `the new pool list moves pool ${c.name} (${c.backend} ${c.dir} to ${w.backend} ${w.dir}), which holds ${describe(h)}` });
    } else if (holds(h) && shrunk) {
      plan.refused.push({ pool: c.name, kind: 'shrink', reason: `the new pool list shrinks pool ${c.name} from ${sizeText(c)} to ${sizeText(w)}, and it holds ${describe(h)}` });
    } else {
      plan.deferred.push({ pool: c.name, reason: `pool ${c.name} changed; the change is taken at the next start` });
    }
  }
  const known = new Set(current.map((c) => c.name));
  for (const w of wanted) {
    if (known.has(w.name)) continue;
    const clash = current.find((c) => inside(w.dir, c.dir) || inside(c.dir, w.dir));
    if (clash !== undefined) {
      plan.deferred.push({ pool: w.name, reason: `new pool ${w.name} (${w.dir}) overlaps pool ${clash.name} (${clash.dir}) of the running driver; not added` });
      continue;
    }
    plan.add.push(w);
  }
  return plan;
}
