// Backend conformance of lvm pools with linear (thick) volumes, in the VM: damage, restart, and SIGKILL right after a create's lvcreate.
import { runConformance } from '../conformance/suite.js';
import { lvmThickFixture } from './lvm-fixtures.js';

// Each crash point costs 30-60 s in the guest (a whole lifecycle and a restart), so CI runs the
// one where lvcreate has just run; the create's record steps (create:recorded, create:finished)
// are the core's own, which the loop suite covers on the host, and run by hand from
// on-demand/conformance-lvm-thick-record-crash.test.ts. The node-side points pass through the
// same block-device code the loop pools cover natively.
runConformance(lvmThickFixture, {
  cases: ['damage', 'restart', 'crash-points'],
  failpoints: ['create:allocated'],
});
