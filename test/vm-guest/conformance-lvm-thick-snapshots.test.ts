// Backend conformance of lvm pools with linear volumes, in the VM: classic snapshots, restores and clones by copy, byte for byte; a volume with snapshots is not deleted.
import { runConformance } from '../conformance/suite.js';
import { lvmThickFixture } from './lvm-fixtures.js';

runConformance(lvmThickFixture, { cases: ['snapshots'] });
