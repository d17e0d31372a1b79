// Backend conformance of lvm pools with thin volumes, in the VM: SIGKILL right after the thin snapshot is made and after a restore's thin snapshot.
import { runConformance } from '../../conformance/suite.js';
import { lvmThinFixture } from '../lvm-fixtures.js';

// The points right after lvcreate of the snapshot (its rollback is the lvremove a delete runs
// too) and of the restore. The others are the core's own steps (a record written, marked or
// removed), which the loop suite covers on the host, and the freeze points, which an LVM copy never
// passes. Run by hand (docs/development.md, "Backend conformance"): 139 s in the guest, more than every CI run
// can add on top of the default LVM snapshot files (261 s).
runConformance(lvmThinFixture, {
  cases: ['snapshot-crash-points'],
  snapshotFailpoints: ['snapshot:taken', 'create:allocated'],
});
