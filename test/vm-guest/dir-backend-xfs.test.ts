// The `dir` backend on XFS mounted prjquota, in the VM's Debian kernel (this host's kernel has no XFS quota): the shared dir backend tests, through DirBackend.
import { dirBackendTests } from '../backends/dir-scenarios.js';
import { projectQuotaFs } from './quota-fixtures.js';
import { guestOnly } from './support.js';

// mkfs.xfs refuses filesystems under 300 MB; the image is sparse on the guest's tmpfs. XFS
// holds root to a project's hard limit as well, so the writer keeps its capabilities.
dirBackendTests(projectQuotaFs('xfs', ['mkfs.xfs', '-q'], []), guestOnly);
