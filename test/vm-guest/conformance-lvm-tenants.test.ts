// The tenant cases of the conformance suite on lvm pools in the VM, thick or thin in turn: no way past a volume's size; an LV Lode did not make at a new volume's, restore's or snapshot's name refused, kept and never served.
import { lvmThickFixture, lvmThinFixture } from './lvm-fixtures.js';
import { runTenantCases } from './tenant-slice.js';

runTenantCases([lvmThickFixture, lvmThinFixture]);
