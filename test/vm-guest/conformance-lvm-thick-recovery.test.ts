// Backend conformance of lvm pools with linear (thick) volumes, in the VM: damage, restart, and SIGKILL at every step of a create.
import { runConformance } from '../conformance/suite.js';
import { lvmThickFixture } from './lvm-fixtures.js';

// Each crash point costs 30-45 s in the guest (a whole lifecycle and a restart), so the
// points of create, grow and delete (where lvcreate, lvextend and lvremove run) take two
// files; the node-side points pass through the same block-device code the loop pools cover natively.
runConformance(lvmThickFixture, {
  cases: ['damage', 'restart', 'crash-points'],
  failpoints: ['create:recorded', 'create:allocated', 'create:finished'],
});
