// Backend conformance of lvm pools with linear volumes, in the VM: an LV of a new volume's, restore's or snapshot's name that Lode did not make is refused, kept and never served (a file of its own: the case takes about 175 s in the guest).
import { runConformance } from '../conformance/suite.js';
import { lvmThickFixture } from './lvm-fixtures.js';

runConformance(lvmThickFixture, { cases: ['foreign-objects'] });
