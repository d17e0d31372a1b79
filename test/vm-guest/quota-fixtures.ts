// The fixtures of dir pools on XFS and ext4 project quotas in the VM: for the conformance suite, and for the shared dir backend tests.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { BackendFixture } from '../conformance/fixture.js';
import { quotaDirFixture } from '../conformance/fixtures.js';
import { recordedProjectId } from '../../src/backends/dir/project-quota-method.js';
import { setDirectoryProject, setProjectLimit, type ProjectQuotaFsType } from '../../src/sys/project-quota.js';
import { scratchFilesystem, sh, type DirFs } from '../backends/dir-scenarios.js';
import { guestOnly } from './support.js';

/** Damage as an operator's slip would do it: the volume's directory removed, under its mounts. */
const removeVolumeDirectory = (poolDir: string, volumeId: string): Promise<void> => fs.rm(path.join(poolDir, 'volumes', volumeId), { recursive: true });

export const dirXfsFixture: BackendFixture = quotaDirFixture({
  name: 'dir-xfs',
  fsType: 'xfs',
  // mkfs.xfs refuses less than 300 MB; sparse, so the guest's tmpfs holds only what is written.
  imageMiB: 512,
  poolSize: '320Mi',
  mkfs: ['mkfs.xfs', '-q', '-f'],
  mountOptions: ['prjquota'],
  commands: ['mkfs.xfs', 'xfs_quota', 'xfs_io'],
  damage: removeVolumeDirectory,
  writers: 'said',
  declares: /project id of a file it owns/,
  unavailable: async () => guestOnly || undefined,
});

export const dirExt4Fixture: BackendFixture = quotaDirFixture({
  name: 'dir-ext4',
  fsType: 'ext4',
  imageMiB: 512,
  poolSize: '320Mi',
  mkfs: ['mkfs.ext4', '-q', '-F', '-O', 'project,quota'],
  mountOptions: ['prjquota'],
  commands: ['mkfs.ext4', 'xfs_quota', 'xfs_io'],
  damage: removeVolumeDirectory,
  writers: 'said',
  declares: /project id of a file it owns/,
  unavailable: async () => guestOnly || undefined,
});

/**
 * The shared dir backend tests' view of a filesystem with project quotas (XFS or ext4): how to
 * make one, and how to break or fake a volume's limit with the same tools the backend uses.
 */
export function projectQuotaFs(fsType: ProjectQuotaFsType, mkfs: readonly string[], writerPrefix: readonly string[]): DirFs {
  return {
    fsType,
    make: (t) => scratchFilesystem(t, 1024, mkfs, ['prjquota']),
    writerPrefix,
    async settle() {
      await sh('sync', []);
    },
    async dropLimit(_b, r, mnt) {
      await setProjectLimit(fsType, mnt, recordedProjectId(r) ?? 0, 0);
    },
    async bareDirectory(dir) {
      await fs.mkdir(dir);
    },
    async stray(dir, mnt, bytes, projectId) {
      await fs.mkdir(dir);
      await setDirectoryProject(dir, projectId);
      await setProjectLimit(fsType, mnt, projectId, bytes);
      return projectId;
    },
  };
}
