// The mount that holds a path, and where the path lies inside that mount's filesystem: what a bind mount of it shows in the mount table.
import { realpathSync } from 'node:fs';
import * as path from 'node:path';
import { readMountTable, type MountEntry } from './mounts.js';

export interface ContainingMount {
  /** The topmost mount whose mount point is the longest prefix of the path. */
  mount: MountEntry;
  /** The path with every link resolved. */
  realPath: string;
  /**
   * The path as the filesystem itself names it (what mountinfo's root field shows for a bind
   * mount of it): the mount's own root joined with the path below its mount point.
   */
  pathInFilesystem: string;
}

/** Whether `inner` is `outer` or lies beneath it (both real, absolute paths). */
export function isAtOrBeneath(inner: string, outer: string): boolean {
  return inner === outer || inner.startsWith(outer === '/' ? '/' : `${outer}/`);
}

/** Finds the mount holding `p`, which must exist (its links are resolved first). */
export async function containingMount(p: string): Promise<ContainingMount> {
  const realPath = realpathSync(p); // a local directory of the pool: never hangs
  let mount: MountEntry | undefined;
  // Later entries are mounted on top of earlier ones at the same point, so the last longest one wins.
  for (const e of await readMountTable()) {
    if (!isAtOrBeneath(realPath, e.mountPoint)) continue;
    if (mount === undefined || e.mountPoint.length >= mount.mountPoint.length) mount = e;
  }
  if (mount === undefined) throw new Error(`no mount holds ${realPath}`);
  const below = path.relative(mount.mountPoint, realPath);
  return { mount, realPath, pathInFilesystem: path.posix.join(mount.root, below) };
}
