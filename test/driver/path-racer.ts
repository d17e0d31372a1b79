// The hostile user of path-races.test.ts: a child process that keeps swapping components of target paths between a directory, links out of the root, a file and nothing.
import { existsSync, lstatSync, mkdirSync, readdirSync, renameSync, rmdirSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { SeededRandom } from '../../src/bench/runtime/seeded-random.js';

/** What a raced component can be made into. */
export const RACE_KINDS = ['home', 'link-outside', 'link-outside-rel', 'link-pool', 'link-inside', 'file', 'nothing', 'fresh-dir'] as const;
export type RaceKind = typeof RACE_KINDS[number];

/** Where the racer works: `raceDir/s<k>` are the raced components, `raceDir/.home-<k>` where their home directories wait. */
export interface RacerArgs {
  seed: number;
  raceDir: string;
  slots: number;
  outside: string;
  pool: string;
  /** A directory inside the target root that links may lead to. */
  inside: string;
}

/** What the racer reports when it stops. */
export interface RacerReport {
  steps: number;
  /** Slots whose home directory could not be put back (a fresh directory holding a mount sat in its place). */
  unrestored: number[];
}

/** Slot k's raced component. */
export const entry = (a: RacerArgs, k: number) => path.join(a.raceDir, `s${k}`);
/** Where slot k's home directory waits while something else is at its entry. */
export const aside = (a: RacerArgs, k: number) => path.join(a.raceDir, `.home-${k}`);

/**
 * Clears slot k: its home directory goes aside (with whatever is in it, mounts included, which
 * come back with it), a link or file is removed, a fresh directory only if nothing but empty
 * directories is in it. False
 * when something had to stay: the racer never moves a directory it cannot bring back.
 */
function clear(a: RacerArgs, k: number): boolean {
  const e = entry(a, k);
  let st;
  try {
    st = lstatSync(e);
  } catch {
    return true;
  }
  try {
    if (!st.isDirectory()) unlinkSync(e);
    else if (!existsSync(aside(a, k))) renameSync(e, aside(a, k));
    else pruneEmpty(e, st.dev);
    return true;
  } catch {
    return false;
  }
}

/**
 * Removes `dir` and the empty directories below it (what the driver made on the way to its
 * targets), bottom up; throws at the first thing that stays: a file, a mount point, a directory
 * on another filesystem (a mounted volume, never entered).
 */
function pruneEmpty(dir: string, dev: number): void {
  for (const name of readdirSync(dir)) {
    const child = path.join(dir, name);
    const st = lstatSync(child);
    if (st.isDirectory() && st.dev === dev) pruneEmpty(child, dev);
  }
  rmdirSync(dir);
}

function make(a: RacerArgs, k: number, kind: RaceKind): void {
  const e = entry(a, k);
  try {
    switch (kind) {
      case 'home': if (existsSync(aside(a, k))) renameSync(aside(a, k), e); break;
      case 'link-outside': symlinkSync(a.outside, e); break;
      case 'link-outside-rel': symlinkSync(path.relative(a.raceDir, a.outside), e); break;
      case 'link-pool': symlinkSync(a.pool, e); break;
      case 'link-inside': symlinkSync(a.inside, e); break;
      case 'file': writeFileSync(e, 'the racer\'s'); break;
      case 'nothing': break;
      case 'fresh-dir': mkdirSync(e); break;
    }
  } catch {
    // The driver made a directory there in between (it creates missing ones): the next step clears it.
  }
}

/** Makes the slots' home directories, each with a file of someone's that nothing may remove. */
export function setUpSlots(a: RacerArgs): void {
  mkdirSync(a.raceDir, { recursive: true });
  mkdirSync(a.inside, { recursive: true });
  for (let k = 0; k < a.slots; k++) {
    mkdirSync(path.join(entry(a, k), 'sub'), { recursive: true });
    writeFileSync(path.join(entry(a, k), 'keep'), `slot ${k}`);
  }
}

/** Where slot k's home directory is now: at its entry, or aside. */
export function homeOf(a: RacerArgs, k: number): string {
  return existsSync(aside(a, k)) ? aside(a, k) : entry(a, k);
}

function runRacer(a: RacerArgs): void {
  const rnd = new SeededRandom(a.seed);
  let stop = false;
  let steps = 0;
  process.on('message', () => { stop = true; });
  const tick = () => {
    // A batch of swaps between looks at the IPC channel: as fast as the racer can, yet stoppable.
    for (let i = 0; i < 50; i++) {
      const k = rnd.int(a.slots);
      const kind = RACE_KINDS[rnd.int(RACE_KINDS.length)] ?? 'home';
      if (clear(a, k)) make(a, k, kind);
      // Half the time a directory swapped for a link comes straight back: the window the driver's steps fall into.
      if (kind !== 'home' && rnd.next() < 0.5 && clear(a, k)) make(a, k, 'home');
      steps++;
    }
    if (!stop) {
      setImmediate(tick);
      return;
    }
    const unrestored: number[] = [];
    for (let k = 0; k < a.slots; k++) {
      if (clear(a, k)) make(a, k, 'home');
      if (homeOf(a, k) !== entry(a, k)) unrestored.push(k);
    }
    const report: RacerReport = { steps, unrestored };
    process.send?.(report, () => process.exit(0));
  };
  tick();
}

// Run as a child (fork): the arguments come as one JSON string.
if (process.send !== undefined && process.argv[2] !== undefined) runRacer(JSON.parse(process.argv[2]) as RacerArgs);
