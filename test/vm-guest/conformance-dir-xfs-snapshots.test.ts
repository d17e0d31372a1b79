// Backend conformance of dir pools on XFS project quotas, in the VM: snapshots, restores and clones as reflink copies of the tree.
import { runConformance } from '../conformance/suite.js';
import { dirXfsFixture } from './quota-fixtures.js';

// No snapshot crash points here: they take seven driver runs (24-37 s each in the guest, measured),
// and pass through the same core and dir backend code that dirBtrfs.test.ts crashes natively;
// what is XFS's and ext4's own (a partial copy replaced, a removal before the pool is open, a
// full copy on ext4) is checked through DirBackend in dir-backend-xfs/ext4.test.ts. ext4 has no
// file of its own: the case took 112 s of guest time there, beyond what CI can add.
runConformance(dirXfsFixture, { cases: ['snapshots'] });
