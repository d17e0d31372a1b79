// The fuzz suites' only source of randomness: a seeded stream, so a seed and a call index replay a failure exactly.
import { SeededRandom } from '../../src/bench/runtime/seeded-random.js';

/** The seed the campaigns ran with before it rotated; `LODE_FUZZ_SEED=fixed` runs it again. */
export const DEFAULT_FUZZ_SEED = 20261201;

export const FUZZ_SEED_ENV = 'LODE_FUZZ_SEED';

/**
 * The fuzz seed, as the crash slices choose theirs: `LODE_FUZZ_SEED=N` replays seed N,
 * `LODE_FUZZ_SEED=fixed` takes DEFAULT_FUZZ_SEED, and by default it is the UTC day, so consecutive
 * CI runs send different calls; every test name carries the seed that replays it.
 */
export function fuzzSeed(env: NodeJS.ProcessEnv = process.env, now = Date.now()): number {
  const raw = env[FUZZ_SEED_ENV];
  if (raw === undefined || raw === '') return Math.floor(now / 86_400_000);
  if (raw === 'fixed') return DEFAULT_FUZZ_SEED;
  if (!/^\d+$/.test(raw)) throw new Error(`${FUZZ_SEED_ENV}="${raw}" must be a non-negative integer or "fixed"`);
  return Number(raw);
}

/** A positive integer from the environment, or `fallback`; anything else is a mistake worth stopping for. */
export function envInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new Error(`${name}="${raw}" must be a non-negative integer`);
  return Number(raw);
}

export class FuzzRandom {
  private readonly r: SeededRandom;

  constructor(seed: number | SeededRandom) {
    this.r = typeof seed === 'number' ? new SeededRandom(seed) : seed;
  }

  /** An independent stream, so drawing more values in one part does not shift the others. */
  fork(label: string): FuzzRandom { return new FuzzRandom(this.r.fork(label)); }

  next(): number { return this.r.next(); }

  /** An integer in [0, n). */
  int(n: number): number { return this.r.int(n); }

  /** An integer in [lo, hi]. */
  between(lo: number, hi: number): number { return lo + this.r.int(hi - lo + 1); }

  chance(p: number): boolean { return this.r.next() < p; }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list');
    return items[this.r.int(items.length)] as T;
  }

  /** Weighted choice: each entry is [weight, value]. */
  weighted<T>(entries: ReadonlyArray<readonly [number, T]>): T {
    const total = entries.reduce((s, [w]) => s + w, 0);
    let x = this.r.next() * total;
    for (const [w, v] of entries) {
      x -= w;
      if (x < 0) return v;
    }
    return entries[entries.length - 1]![1];
  }

  bytes(n: number): Buffer {
    const b = Buffer.allocUnsafe(n);
    for (let i = 0; i < n; i++) b[i] = this.r.int(256);
    return b;
  }

  /** A size skewed towards small values but reaching `max`: most hostile inputs are short, a few are huge. */
  length(max: number): number {
    return Math.min(max, Math.floor(Math.pow(this.r.next(), 4) * (max + 1)));
  }
}
