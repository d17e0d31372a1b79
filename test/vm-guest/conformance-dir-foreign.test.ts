// Backend conformance of dir pools on XFS and ext4 project quotas, in the VM: a directory or file Lode did not make at a new volume's or snapshot's place is refused, kept and never served.
import { runConformance } from '../conformance/suite.js';
import { dirExt4Fixture, dirXfsFixture } from './quota-fixtures.js';

// Both filesystems: the project-quota create sets a limit before it makes the directory, and a
// restore copies a tree into one, each of which must meet the planted object first.
runConformance(dirXfsFixture, { cases: ['foreign-objects'] });
runConformance(dirExt4Fixture, { cases: ['foreign-objects'] });
