// The `dir` backend on ext4 with the project and quota features mounted prjquota, in the VM's Debian kernel: the shared dir backend tests, through DirBackend.
import { dirBackendTests } from '../backends/dir-scenarios.js';
import { projectQuotaFs } from './quota-fixtures.js';
import { guestOnly } from './support.js';

dirBackendTests(projectQuotaFs(
  'ext4',
  // Project ids live in the inode's extra space: small filesystems default to 128-byte inodes, too small.
  ['mkfs.ext4', '-q', '-O', 'quota,project', '-I', '256'],
  // ext4 (like every VFS quota format) lets a writer holding CAP_SYS_RESOURCE past any hard
  // limit; a pod's container does not hold it unless privileged, so the workload here drops it.
  ['setpriv', '--inh-caps=-sys_resource', '--bounding-set=-sys_resource'],
), guestOnly);
