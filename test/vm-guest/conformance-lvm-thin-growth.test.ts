// Backend conformance of lvm pools with thin volumes, in the VM: growth of a thin volume (lvextend of its virtual size, then the filesystem) on ext4 and xfs.
import { runConformance } from '../conformance/suite.js';
import { lvmThinFixture } from './lvm-fixtures.js';

runConformance(lvmThinFixture, { cases: ['growth'] });
