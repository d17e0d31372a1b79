// Backend conformance of dir pools on XFS project quotas, in the VM: damage, restart and the crash points a directory volume passes through.
import { runConformance } from '../conformance/suite.js';
import { dirXfsFixture } from './quota-fixtures.js';

// The crash points where XFS's own steps run (the project id and limit set, the tree removed);
// every other failpoint passes through the same dir backend code that dirBtrfs.test.ts covers
// natively. Five points took 193 s of the guest's 300 s bound; three keep a margin.
runConformance(dirXfsFixture, {
  cases: ['damage', 'restart', 'crash-points'],
  failpoints: ['create:recorded', 'create:allocated', 'delete:released'],
  // One point per run, rotating by seed (30-60 s each under emulation); LODE_CRASH_POINTS=all takes every one.
  crashSlice: 1,
});
