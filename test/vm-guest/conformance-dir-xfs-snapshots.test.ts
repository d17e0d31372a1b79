// Backend conformance of dir pools on XFS project quotas, in the VM: snapshots, restores and clones as reflink copies of the tree, and SIGKILL at each of their steps.
import { runConformance } from '../conformance/suite.js';
import { dirXfsFixture } from './quota-fixtures.js';

runConformance(dirXfsFixture, { cases: ['snapshots', 'snapshot-crash-points'] });
