// The conformance fixtures of dir pools on XFS and ext4 project quotas, for the guest files that run the suite in the VM.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { BackendFixture } from '../conformance/fixture.js';
import { quotaDirFixture } from '../conformance/fixtures.js';
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
  unavailable: async () => guestOnly || undefined,
});
