// The `dir` backend on ext4 with the project and quota features mounted prjquota, in the VM's Debian kernel: the shared dir backend tests, through DirBackend.
import { mkdir } from 'node:fs/promises';
import type { DirFs } from '../backends/dir-scenarios.js';
import { dirBackendTests, scratchFilesystem, sh } from '../backends/dir-scenarios.js';
import { recordedProjectId } from '../../src/backends/dir/project-quota-method.js';
import { setDirectoryProject, setProjectLimit } from '../../src/sys/project-quota.js';
import { guestOnly } from './support.js';

const ext4: DirFs = {
  fsType: 'ext4',
  // Project ids live in the inode's extra space: small filesystems default to 128-byte inodes, too small.
  make: (t) => scratchFilesystem(t, 1024, ['mkfs.ext4', '-q', '-O', 'quota,project', '-I', '256'], ['prjquota']),
  // ext4 (like every VFS quota format) lets a writer holding CAP_SYS_RESOURCE past any hard
  // limit; a pod's container does not hold it unless privileged, so the workload here drops it.
  writerPrefix: ['setpriv', '--inh-caps=-sys_resource', '--bounding-set=-sys_resource'],
  async settle() {
    await sh('sync', []);
  },
  async dropLimit(_b, r, mnt) {
    await setProjectLimit('ext4', mnt, recordedProjectId(r) ?? 0, 0);
  },
  async bareDirectory(dir) {
    await mkdir(dir);
  },
  async stray(dir, mnt, bytes, projectId) {
    await mkdir(dir);
    await setDirectoryProject(dir, projectId);
    await setProjectLimit('ext4', mnt, projectId, bytes);
    return projectId;
  },
};

dirBackendTests(ext4, guestOnly);
