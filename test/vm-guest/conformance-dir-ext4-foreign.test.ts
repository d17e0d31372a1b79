// Backend conformance of dir pools on ext4 project quotas, in the VM: a directory or file Lode did not make at a new volume's, restore's or snapshot's place is refused, kept and never served.
import { runConformance } from '../conformance/suite.js';
import { dirExt4Fixture } from './quota-fixtures.js';

runConformance(dirExt4Fixture, { cases: ['foreign-objects'] });
