// Backend conformance of lvm pools with linear (thick) volumes, in the VM: SIGKILL at every step of a grow and a delete.
import { runConformance } from '../conformance/suite.js';
import { lvmThickFixture } from './lvm-fixtures.js';

runConformance(lvmThickFixture, {
  cases: ['crash-points'],
  failpoints: ['expand:grown', 'delete:marked', 'delete:released', 'delete:unrecorded'],
});
