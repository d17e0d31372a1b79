// Backend conformance of lvm pools with thin volumes, in the VM: an LV of a new volume's, restore's or snapshot's name that Lode did not make is refused, kept and never served (a thin restore and snapshot are other LVM calls than thick ones).
import { runConformance } from '../conformance/suite.js';
import { lvmThinFixture } from './lvm-fixtures.js';

runConformance(lvmThinFixture, { cases: ['foreign-objects'] });
