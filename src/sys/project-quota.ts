// Project quotas on XFS and ext4: whether a filesystem enforces them, a directory's project id, and a project's hard block limit and usage, all through xfs_quota and xfs_io.
import { run } from './exec.js';

/** The filesystems whose project quotas Lode drives; xfs_quota handles ext4 as a "foreign" filesystem (-f). */
export type ProjectQuotaFsType = 'xfs' | 'ext4';

export function isProjectQuotaFsType(v: string): v is ProjectQuotaFsType {
  return v === 'xfs' || v === 'ext4';
}

function quotaArgs(fsType: ProjectQuotaFsType, command: string, mountPoint: string): string[] {
  return [...(fsType === 'ext4' ? ['-f'] : []), '-x', '-c', command, mountPoint];
}

export interface ProjectQuotaState {
  accounting: boolean;
  enforcing: boolean;
}

/**
 * Project quota state of the filesystem mounted at `mountPoint`. xfs_quota prints nothing at
 * all for a filesystem mounted without project quotas, so an empty answer means both off.
 */
export async function projectQuotaState(fsType: ProjectQuotaFsType, mountPoint: string): Promise<ProjectQuotaState> {
  const { stdout } = await run('xfs_quota', quotaArgs(fsType, 'state -p', mountPoint));
  return parseProjectQuotaState(stdout);
}

/** Reads `xfs_quota -x -c 'state -p'` output. */
export function parseProjectQuotaState(stdout: string): ProjectQuotaState {
  return {
    accounting: /^\s*Accounting:\s*ON\b/m.test(stdout),
    enforcing: /^\s*Enforcement:\s*ON\b/m.test(stdout),
  };
}

/** What an operator does so that the filesystem at `mountPoint` (on `source`) enforces project quotas. */
export function projectQuotaHowTo(fsType: ProjectQuotaFsType, mountPoint: string, source: string): string {
  if (fsType === 'xfs') {
    return `XFS at ${mountPoint} does not enforce project quotas: mount it with the prjquota option `
      + `(it cannot be turned on by a remount: umount ${mountPoint}; mount -o prjquota ${source} ${mountPoint}; `
      + `and put prjquota among its options in /etc/fstab)`;
  }
  return `ext4 at ${mountPoint} does not enforce project quotas: it needs the project and quota features and the prjquota `
    + `mount option (umount ${mountPoint}; tune2fs -O project,quota ${source}; mount -o prjquota ${source} ${mountPoint}; `
    + `and put prjquota among its options in /etc/fstab)`;
}

/**
 * Gives `dir` project `projectId` and the inherit flag, so that everything later made inside it
 * is charged to the project (and cannot be moved or linked out of it).
 */
export async function setDirectoryProject(dir: string, projectId: number): Promise<void> {
  await run('xfs_io', ['-c', `chproj ${projectId}`, '-c', 'chattr +P', dir]);
}

export interface DirectoryProject {
  projectId: number;
  /** The project-inherit flag ("P"): new entries inside get the directory's project id. */
  inherit: boolean;
}

/** The project id and inherit flag of `dir`. */
export async function directoryProject(dir: string): Promise<DirectoryProject> {
  const { stdout } = await run('xfs_io', ['-r', '-c', 'lsproj', '-c', 'lsattr', dir]);
  return parseDirectoryProject(stdout, dir);
}

/** Reads `xfs_io -r -c lsproj -c lsattr DIR` output: "projid = N", then the flags word and the path. */
export function parseDirectoryProject(stdout: string, dir: string): DirectoryProject {
  const id = /^projid = (\d+)$/m.exec(stdout)?.[1];
  if (id === undefined) throw new Error(`xfs_io printed no project id for ${dir}: ${stdout.trim()}`);
  // lsattr prints the flags as one word of letters and dashes ("--------P--------"), then the path.
  const flags = stdout.split('\n').find((l) => !l.startsWith('projid') && /^[-A-Za-z]+ \S/.test(l))?.split(' ')[0] ?? '';
  return { projectId: Number(id), inherit: flags.includes('P') };
}

/** Sets project `projectId`'s hard block limit to `bytes`; 0 removes the limit. */
export async function setProjectLimit(fsType: ProjectQuotaFsType, mountPoint: string, projectId: number, bytes: number): Promise<void> {
  await run('xfs_quota', quotaArgs(fsType, `limit -p bhard=${bytes} ${projectId}`, mountPoint));
}

export interface ProjectFigures {
  usedBytes: number;
  /** The hard block limit; 0 = none. */
  hardLimitBytes: number;
}

/** Each line of `report -p -b -N -n` is "#id used soft hard warn [grace]", in KiB. */
const REPORT_LINE = /^#(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\b/;

/**
 * Usage and hard limit of every project from `first` to `last` that the filesystem knows
 * (one with no usage and no limit is left out).
 */
export async function projectReport(fsType: ProjectQuotaFsType, mountPoint: string, first: number, last: number): Promise<Map<number, ProjectFigures>> {
  const { stdout } = await run('xfs_quota', quotaArgs(fsType, `report -p -b -N -n -L ${first} -U ${last}`, mountPoint));
  return parseProjectReport(stdout);
}

/** Reads `xfs_quota -x -c 'report -p -b -N -n'` output. */
export function parseProjectReport(stdout: string): Map<number, ProjectFigures> {
  const figures = new Map<number, ProjectFigures>();
  for (const line of stdout.split('\n')) {
    const m = REPORT_LINE.exec(line.trim());
    if (!m) continue;
    figures.set(Number(m[1]), { usedBytes: Number(m[2]) * 1024, hardLimitBytes: Number(m[4]) * 1024 });
  }
  return figures;
}

/** One project's usage and hard limit (zeros when the filesystem has no figures for it). */
export async function projectFigures(fsType: ProjectQuotaFsType, mountPoint: string, projectId: number): Promise<ProjectFigures> {
  return (await projectReport(fsType, mountPoint, projectId, projectId)).get(projectId) ?? { usedBytes: 0, hardLimitBytes: 0 };
}
