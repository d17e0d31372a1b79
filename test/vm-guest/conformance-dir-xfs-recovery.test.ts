// Backend conformance of dir pools on XFS project quotas, in the VM: damage, restart and the crash points a directory volume passes through.
import { runConformance } from '../conformance/suite.js';
import { dirXfsFixture } from './quota-fixtures.js';

runConformance(dirXfsFixture, {
  cases: ['damage', 'restart', 'crash-points'],
  failpoints: ['create:recorded', 'create:allocated', 'expand:grown', 'delete:marked', 'delete:released'],
});
