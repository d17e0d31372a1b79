// The writers case of the conformance suite on lvm pools, thick and thin, in the VM: each volume a device of its own, so no way past its size.
import { runConformance } from '../conformance/suite.js';
import { lvmThickFixture, lvmThinFixture } from './lvm-fixtures.js';

for (const fixture of [lvmThickFixture, lvmThinFixture]) runConformance(fixture, { cases: ['writers'] });
