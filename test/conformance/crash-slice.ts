// Which of a file's crash points a run takes: all of them on request, else a seeded slice, so CI stays in budget and rotates through every point.
import { SeededRandom } from '../../src/bench/runtime/seeded-random.js';

/** `LODE_CRASH_POINTS=all` runs every listed point; `LODE_CRASH_SEED=N` replays a slice. */
export const CRASH_POINTS_ENV = 'LODE_CRASH_POINTS';
export const CRASH_SEED_ENV = 'LODE_CRASH_SEED';

export interface CrashSlice {
  points: readonly string[];
  /** Said in each test's name, so a failure names how to replay it. */
  label: string;
}

/**
 * The seed defaults to the UTC day, so consecutive CI runs take different points and every point of
 * a list is taken within a few days; a failing run's test names carry the seed that replays it.
 */
export function crashSlice(points: readonly string[], take: number | undefined, env: NodeJS.ProcessEnv = process.env, now = Date.now()): CrashSlice {
  if (take === undefined || take >= points.length || env[CRASH_POINTS_ENV] === 'all') return { points, label: '' };
  if (!Number.isInteger(take) || take < 1) throw new Error(`a crash slice takes at least one point, not ${take}`);
  const raw = env[CRASH_SEED_ENV];
  if (raw !== undefined && raw !== '' && !/^\d+$/.test(raw)) throw new Error(`${CRASH_SEED_ENV}="${raw}" must be a non-negative integer`);
  const seed = raw !== undefined && raw !== '' ? Number(raw) : Math.floor(now / 86_400_000);
  const random = new SeededRandom(seed);
  const pool = [...points];
  const chosen: string[] = [];
  while (chosen.length < take) chosen.push(pool.splice(random.int(pool.length), 1)[0] as string);
  // Lifecycle order, so a slice reads like the full list with points left out.
  const ordered = points.filter((p) => chosen.includes(p));
  return { points: ordered, label: ` [slice of ${take}/${points.length}, ${CRASH_SEED_ENV}=${seed}; ${CRASH_POINTS_ENV}=all for every point]` };
}
