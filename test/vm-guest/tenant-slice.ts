// Which of two backends the VM's tenant cases (writers, foreign objects) run on in one run: a seeded choice that rotates, as the crash points do, so CI stays in budget and covers both.
import type { BackendFixture } from '../conformance/fixture.js';
import { crashSlice } from '../conformance/crash-slice.js';
import { runConformance } from '../conformance/suite.js';

/**
 * Registers the writers and foreign-objects cases for one of `fixtures` (both with
 * LODE_CRASH_POINTS=all; LODE_CRASH_SEED=N replays a run's choice). The seed defaults to the
 * UTC day, like the crash points', and the suite's name says it.
 */
export function runTenantCases(fixtures: readonly BackendFixture[]): void {
  const slice = crashSlice(fixtures.map((f) => f.name), 1);
  for (const fixture of fixtures.filter((f) => slice.points.includes(f.name))) {
    runConformance({ ...fixture, name: `${fixture.name}${slice.label}` }, { cases: ['writers', 'foreign-objects'] });
  }
}
