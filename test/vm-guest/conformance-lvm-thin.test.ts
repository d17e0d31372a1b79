// Backend conformance of lvm pools with thin volumes, in the VM (this host's kernel has no device-mapper): the cases where thin volumes differ from thick ones.
import { runConformance } from '../conformance/suite.js';
import { lvmThinFixture } from './lvm-fixtures.js';

// What a thin pool changes is how storage is made, grown, removed and counted; idempotency and
// the capability refusals run through the same node-side block code as the thick files'.
// Growth is a file of its own, to stay well inside the guest's per-file bound.
runConformance(lvmThinFixture, { cases: ['lifecycle', 'size', 'capacity'] });
