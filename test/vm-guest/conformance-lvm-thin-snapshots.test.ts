// Backend conformance of lvm pools with thin volumes, in the VM: thin snapshots, restores (also larger) and clones, byte for byte, and all capacity back.
import { runConformance } from '../conformance/suite.js';
import { lvmThinFixture } from './lvm-fixtures.js';

runConformance(lvmThinFixture, { cases: ['snapshots'] });
