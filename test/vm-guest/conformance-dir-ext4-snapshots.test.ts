// Backend conformance of dir pools on ext4 project quotas, in the VM: snapshots, restores and clones as full copies of the tree (ext4 has no reflink).
import { runConformance } from '../conformance/suite.js';
import { dirExt4Fixture } from './quota-fixtures.js';

runConformance(dirExt4Fixture, { cases: ['snapshots', 'snapshot-crash-points'] });
