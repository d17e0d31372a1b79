// The `dir` backend on XFS mounted prjquota, in the VM's Debian kernel (this host's kernel has no XFS quota): the shared dir backend tests, through DirBackend.
import { mkdir } from 'node:fs/promises';
import type { DirFs } from '../backends/dir-scenarios.js';
import { dirBackendTests, scratchFilesystem, sh } from '../backends/dir-scenarios.js';
import { recordedProjectId } from '../../src/backends/dir/project-quota-method.js';
import { setDirectoryProject, setProjectLimit } from '../../src/sys/project-quota.js';
import { guestOnly } from './support.js';

const xfs: DirFs = {
  fsType: 'xfs',
  // mkfs.xfs refuses filesystems under 300 MB; the image is sparse on the guest's tmpfs.
  make: (t) => scratchFilesystem(t, 1024, ['mkfs.xfs', '-q'], ['prjquota']),
  writerPrefix: [], // XFS holds root to a project's hard limit as well
  async settle() {
    await sh('sync', []);
  },
  async dropLimit(_b, r, mnt) {
    await setProjectLimit('xfs', mnt, recordedProjectId(r) ?? 0, 0);
  },
  async bareDirectory(dir) {
    await mkdir(dir);
  },
  async stray(dir, mnt, bytes, projectId) {
    await mkdir(dir);
    await setDirectoryProject(dir, projectId);
    await setProjectLimit('xfs', mnt, projectId, bytes);
    return projectId;
  },
};

dirBackendTests(xfs, guestOnly);
