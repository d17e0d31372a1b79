// Backend conformance of dir pools on ext4 project quotas, in the VM: damage, restart and crash points.
import { runConformance } from '../conformance/suite.js';
import { dirExt4Fixture } from './quota-fixtures.js';

runConformance(dirExt4Fixture, {
  cases: ['damage', 'restart', 'crash-points'],
  failpoints: ['create:recorded', 'create:allocated', 'delete:released'],
});
