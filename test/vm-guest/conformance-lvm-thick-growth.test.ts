// Backend conformance of lvm pools with linear (thick) volumes, in the VM: growth on ext4 and xfs (lvextend, then the filesystem) and the capability refusals.
import { runConformance } from '../conformance/suite.js';
import { lvmThickFixture } from './lvm-fixtures.js';

runConformance(lvmThickFixture, { cases: ['growth', 'refusals'] });
