// Which host directories the guest would not see through the root share, because its own tmpfs lies
// over /tmp and /run: each travels as its own read-only 9p export, mounted at the same path.
import * as path from 'node:path';
import { GUEST_JOB_DIR } from './initramfs.js';

/** Where the guest mounts a fresh tmpfs over the host root (test/vm/initramfs.ts). */
export const GUEST_TMPFS = ['/tmp', '/run'] as const;

export interface ExtraShare {
  /** The 9p mount tag (qemu's -virtfs and the guest's mount agree on it). */
  tag: string;
  /** The host directory, mounted at the same path in the guest. */
  dir: string;
}

function under(dir: string, root: string): boolean {
  return dir === root || dir.startsWith(`${root}/`);
}

/**
 * The exports for `dirs` (absolute host directories the guest must read): those under a guest tmpfs,
 * without any that lies inside another. A directory that is a tmpfs root itself cannot be one: its
 * export would cover the guest's own scratch space; nor can the job share's place, which it would take.
 */
export function extraShares(dirs: readonly string[]): ExtraShare[] {
  const hidden = [...new Set(dirs.map((d) => path.resolve(d)))].filter((d) => GUEST_TMPFS.some((root) => under(d, root)));
  for (const d of hidden) {
    if ((GUEST_TMPFS as readonly string[]).includes(d)) {
      throw new Error(`the test VM cannot read from ${d} itself (the guest has its own ${d}); use a directory under it`);
    }
    if (under(d, GUEST_JOB_DIR)) throw new Error(`the test VM cannot read from ${d}: the guest keeps its job files at ${GUEST_JOB_DIR}; use another directory`);
  }
  const outermost = hidden.sort().filter((d, _i, all) => !all.some((o) => o !== d && under(d, o)));
  return outermost.map((dir, i) => ({ tag: `lodepath${i}`, dir }));
}
