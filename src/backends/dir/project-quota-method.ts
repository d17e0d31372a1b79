// Quota directories on XFS and ext4: each volume a directory with a project id of its own (inherited by all inside) and that project's hard block limit.
import { promises as fs } from 'node:fs';
import type { VolumeUsage } from '../../pool/backend.js';
import { StorageOccupiedError } from '../../pool/occupied.js';
import type { VolumeRecord } from '../../pool/volume-record.js';
import { run } from '../../sys/exec.js';
import { entryAt, kindOf } from '../../sys/entry-at.js';
import {
  directoryProject, projectFigures, projectQuotaHowTo, projectQuotaState, projectReport, setDirectoryProject, setProjectLimit, type ProjectQuotaFsType,
} from '../../sys/project-quota.js';
import { PROJECT_ID_FIRST, PROJECT_ID_LAST } from './project-ids.js';
import { LIMIT_GRANULE, type FoundDirectory, type QuotaMethod, type Survey, type VolumesPlace } from './quota-method.js';

/** The project id the core recorded for the volume at assign time. */
export function recordedProjectId(record: VolumeRecord): number | undefined {
  const id = record.backing?.['projectId'];
  return typeof id === 'number' && Number.isSafeInteger(id) && id > 0 ? id : undefined;
}

function projectIdOf(record: VolumeRecord): number {
  const id = recordedProjectId(record);
  if (id === undefined) throw new Error(`volume ${record.id} has no quota project id in its record`);
  return id;
}

export class ProjectQuotaMethod implements QuotaMethod {
  readonly usesProjectIds = true;
  private readonly mountPoint: string;

  constructor(readonly fsType: ProjectQuotaFsType, private readonly place: VolumesPlace) {
    this.mountPoint = place.containing.mount.mountPoint;
  }

  async unenforced(): Promise<string | undefined> {
    const state = await projectQuotaState(this.fsType, this.mountPoint);
    if (state.enforcing) return undefined;
    return projectQuotaHowTo(this.fsType, this.mountPoint, this.place.containing.mount.source);
  }

  async create(dir: string, record: VolumeRecord): Promise<void> {
    const id = projectIdOf(record);
    // A directory there is an earlier attempt's under this record (the core found none before
    // writing it); anything else is refused before the limit is set, so nothing was made.
    const st = await entryAt(dir);
    if (st !== undefined && !st.isDirectory()) throw new StorageOccupiedError(dir, `is ${kindOf(st)}, not a volume directory`);
    // The limit first: from the moment the directory carries the id, nothing in it is unlimited.
    await setProjectLimit(this.fsType, this.mountPoint, id, record.capacityBytes);
    await makeVolumeDirectory(dir);
    await setDirectoryProject(dir, id);
  }

  async setLimit(_dir: string, record: VolumeRecord): Promise<void> {
    await setProjectLimit(this.fsType, this.mountPoint, projectIdOf(record), record.capacityBytes);
  }

  async remove(dir: string, record: VolumeRecord): Promise<void> {
    // GNU rm never follows a link, and --one-file-system leaves (and fails on) anything on another filesystem.
    await run('rm', ['-rf', '--one-file-system', '--', dir]);
    const id = recordedProjectId(record);
    // The limit goes last: should the removal fail, the files left stay held to it.
    if (id !== undefined) await setProjectLimit(this.fsType, this.mountPoint, id, 0);
  }

  async usage(dir: string): Promise<VolumeUsage> {
    // On a directory with the project-inherit flag, XFS and ext4 answer statfs with the
    // project's hard limit and usage (checked in the VM's Debian kernel): no tool to run.
    const s = await fs.statfs(dir);
    const totalBytes = s.blocks * s.bsize;
    const usedBytes = Math.max(0, (s.blocks - s.bfree) * s.bsize);
    return {
      totalBytes,
      usedBytes,
      availableBytes: Math.max(0, Math.min(s.bavail * s.bsize, totalBytes - usedBytes)),
      inodes: { total: s.files, used: Math.max(0, s.files - s.ffree), available: s.ffree },
    };
  }

  async problem(dir: string, record: VolumeRecord): Promise<string | undefined> {
    const id = recordedProjectId(record);
    if (id === undefined) return `the record of volume ${record.id} has no quota project id, so nothing holds ${dir} to its size`;
    const project = await directoryProject(dir);
    if (project.projectId !== id) return `volume directory ${dir} has quota project id ${project.projectId}, expected ${id}`;
    if (!project.inherit) return `volume directory ${dir} lacks the project-inherit flag, so new files in it escape its limit`;
    const { hardLimitBytes } = await projectFigures(this.fsType, this.mountPoint, id);
    if (hardLimitBytes === 0) return `quota project ${id} of volume directory ${dir} has no hard limit (expected ${record.capacityBytes} bytes)`;
    if (Math.abs(hardLimitBytes - record.capacityBytes) >= LIMIT_GRANULE) {
      return `quota project ${id} of volume directory ${dir} has a hard limit of ${hardLimitBytes} bytes, expected ${record.capacityBytes}`;
    }
    return undefined;
  }

  async inspect(dir: string): Promise<FoundDirectory> {
    const { projectId } = await directoryProject(dir);
    if (projectId === 0) return { projectId, bytes: 0 }; // the default project: nothing counts it apart
    const f = await projectFigures(this.fsType, this.mountPoint, projectId);
    return { projectId, bytes: f.hardLimitBytes > 0 ? f.hardLimitBytes : f.usedBytes };
  }

  /**
   * The owner of a file may set its project id (FS_IOC_FSSETXATTR; `chattr -p`, `xfs_io -c
   * chproj`) with no privilege, unless it runs in a user namespace, and nothing on the
   * filesystem says which files left which volume: no survey can find them short of walking
   * every tree. So this is said, not caught.
   */
  async escapableBy(): Promise<string> {
    return 'a writer can set the quota project id of a file it owns (chattr -p, allowed to the owner outside a user namespace), which moves the file out of its volume\'s limit, or into another volume\'s; pods with hostUsers: false cannot';
  }

  async prepare(): Promise<void> {}

  async survey(volumes: ReadonlyMap<string, number | undefined>): Promise<Survey> {
    const ids = [...volumes.values()].filter((id): id is number => id !== undefined);
    const used = new Map<string, number>();
    const caught = new Map<string, string>();
    if (ids.length === 0) return { used, caught };
    const report = await projectReport(this.fsType, this.mountPoint, Math.min(...ids), Math.max(...ids));
    for (const [volume, id] of volumes) if (id !== undefined) used.set(volume, report.get(id)?.usedBytes ?? 0);
    return { used, caught };
  }

  async projectIdsInUse(): Promise<number[]> {
    return [...(await projectReport(this.fsType, this.mountPoint, PROJECT_ID_FIRST, PROJECT_ID_LAST)).keys()];
  }
}

/** Makes the volume's directory unless it is one already; a link or file in its place is refused, never followed. */
export async function makeVolumeDirectory(dir: string): Promise<void> {
  try {
    await fs.mkdir(dir, { mode: 0o755 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    const st = await fs.lstat(dir);
    if (!st.isDirectory()) throw new Error(`${dir} exists and is not a directory`);
  }
  // 0755 whatever the umask: kubelet applies a pod's fsGroup on top of it.
  await fs.chmod(dir, 0o755);
}
