// Backend conformance of lvm pools with linear (thick) volumes, in the VM: SIGKILL at the record steps of a create and a delete.
import { runConformance } from '../../conformance/suite.js';
import { lvmThickFixture } from '../lvm-fixtures.js';

// The core's own steps (a record written, marked, finished or removed) around the LVM commands,
// which the loop suite SIGKILLs on the host at every run. On LVM they cost about 50 s each in the
// guest under emulation, too much for every CI run; run by hand (docs/development.md, "Backend conformance").
runConformance(lvmThickFixture, {
  cases: ['crash-points'],
  failpoints: ['create:recorded', 'create:finished', 'delete:marked', 'delete:unrecorded'],
});
