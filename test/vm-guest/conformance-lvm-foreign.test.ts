// Backend conformance of lvm pools, thick and thin, in the VM: a logical volume of a new volume's or snapshot's name that Lode did not make is refused, kept and never served.
import { runConformance } from '../conformance/suite.js';
import { lvmThickFixture, lvmThinFixture } from './lvm-fixtures.js';

// One case per pool kind: a thin restore or snapshot is made by other LVM calls than a thick
// one, and each meets the planted LV before its record is written.
runConformance(lvmThickFixture, { cases: ['foreign-objects'] });
runConformance(lvmThinFixture, { cases: ['foreign-objects'] });
