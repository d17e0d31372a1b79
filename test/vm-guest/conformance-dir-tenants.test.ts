// The tenant cases of the conformance suite on dir pools in the VM, XFS or ext4 project quotas in turn: the way past a volume's limit the pool declares (a project id the owner changes) and nothing else; objects Lode did not make refused, kept and never served.
import { dirExt4Fixture, dirXfsFixture } from './quota-fixtures.js';
import { runTenantCases } from './tenant-slice.js';

runTenantCases([dirXfsFixture, dirExt4Fixture]);
