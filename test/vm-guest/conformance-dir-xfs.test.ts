// Backend conformance of dir pools on XFS project quotas, in the VM (this host's kernel has no XFS quota support): the lifecycle cases.
import { runConformance } from '../conformance/suite.js';
import { dirXfsFixture } from './quota-fixtures.js';

// Split from the recovery cases so each guest file stays well inside the VM's per-file bound
// under software emulation.
runConformance(dirXfsFixture, { cases: ['lifecycle', 'size', 'capacity', 'growth', 'refusals'] });
