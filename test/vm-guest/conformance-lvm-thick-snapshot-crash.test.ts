// Backend conformance of lvm pools with linear volumes, in the VM: SIGKILL right after a restore's copy of a classic snapshot.
import { runConformance } from '../conformance/suite.js';
import { lvmThickFixture } from './lvm-fixtures.js';

// The restore's rollback of a copied linear LV is thick's own (75 s in the guest). A classic
// snapshot's rollback is the same lvremove as a thin one's, in on-demand/ with the thin points.
runConformance(lvmThickFixture, {
  cases: ['snapshot-crash-points'],
  snapshotFailpoints: ['create:allocated'],
});
