// Backend conformance of lvm pools with linear (thick) volumes, in the VM: SIGKILL right after lvextend of a grow and lvremove of a delete.
import { runConformance } from '../conformance/suite.js';
import { lvmThickFixture } from './lvm-fixtures.js';

// The points where an LVM command has just changed the volume group. The delete's record steps
// (delete:marked, delete:unrecorded) are the core's own, which the loop suite covers on the host;
// they run by hand from on-demand/conformance-lvm-thick-record-crash.test.ts.
runConformance(lvmThickFixture, {
  cases: ['crash-points'],
  failpoints: ['expand:grown', 'delete:released'],
  // One point per run, rotating by seed (30-60 s each under emulation); LODE_CRASH_POINTS=all takes every one.
  crashSlice: 1,
});
