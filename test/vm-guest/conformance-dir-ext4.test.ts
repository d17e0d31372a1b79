// Backend conformance of dir pools on ext4 project quotas, in the VM (this host's kernel was built without the ext4 quota format): the lifecycle cases.
import { runConformance } from '../conformance/suite.js';
import { dirExt4Fixture } from './quota-fixtures.js';

// No 'size' case: ext4 lets a writer with CAP_SYS_RESOURCE (this test process) past any hard
// limit; dir-backend-ext4.test.ts checks enforcement with a writer that has dropped it.
runConformance(dirExt4Fixture, { cases: ['lifecycle', 'capacity', 'growth', 'refusals'] });
