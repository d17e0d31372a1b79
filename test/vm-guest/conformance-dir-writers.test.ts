// The writers case of the conformance suite on dir pools on XFS and ext4 project quotas, in the VM: the way past a volume's limit the pool must declare (a project id its owner changes), and nothing else.
import { runConformance } from '../conformance/suite.js';
import { dirExt4Fixture, dirXfsFixture } from './quota-fixtures.js';

for (const fixture of [dirXfsFixture, dirExt4Fixture]) runConformance(fixture, { cases: ['writers'] });
