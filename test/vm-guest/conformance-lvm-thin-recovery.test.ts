// Backend conformance of lvm pools with thin volumes, in the VM: SIGKILL right after each thin LVM step (damage detection is the same code as thick's, covered there).
import { runConformance } from '../conformance/suite.js';
import { lvmThinFixture } from './lvm-fixtures.js';

// The points right after lvcreate, lvextend and lvremove of a thin volume; the others are the
// volume core's own steps, the same for thin and thick, which the thick files cover.
runConformance(lvmThinFixture, {
  cases: ['crash-points'],
  failpoints: ['create:allocated', 'expand:grown', 'delete:released'],
  // One point per run, rotating by seed (30-60 s each under emulation); LODE_CRASH_POINTS=all takes every one.
  crashSlice: 1,
});
