// Backend conformance of lvm pools with linear (thick) volumes, in the VM (this host's kernel has no device-mapper): the lifecycle cases.
import { runConformance } from '../conformance/suite.js';
import { lvmThickFixture } from './lvm-fixtures.js';

// Growth and refusals, and the recovery cases, are files of their own: all eight lifecycle
// cases in one file took 262 s of the guest's 300 s bound under software emulation.
runConformance(lvmThickFixture, { cases: ['lifecycle', 'idempotency', 'size', 'capacity'] });
