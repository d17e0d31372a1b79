// Backend conformance of dir pools on ext4 project quotas, in the VM: damage, restart and crash points.
import { runConformance } from '../conformance/suite.js';
import { dirExt4Fixture } from './quota-fixtures.js';

runConformance(dirExt4Fixture, {
  cases: ['damage', 'restart', 'crash-points'],
  failpoints: ['create:recorded', 'create:allocated', 'delete:released'],
  // One point per run, rotating by seed (30-60 s each under emulation); LODE_CRASH_POINTS=all takes every one.
  crashSlice: 1,
});
