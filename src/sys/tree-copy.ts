// Copying a directory tree for a snapshot or a restore: reflinked files where the filesystem shares blocks, else full copies, durable before it returns.
import type { CopyMethod } from './file-copy.js';
import { run } from './exec.js';

/**
 * Copies the contents of `from` into `to` (made if missing; an existing `to` takes `from`'s
 * owner, mode and times): ownership, modes, times, links, hard links, ACLs and extended
 * attributes kept, never leaving `from`'s filesystem (a mount inside is skipped). A reflink
 * copy shares every file's blocks (and fails rather than fall back, so Lode knows what it
 * made); a full copy keeps holes as holes. Not a point in time: files changing meanwhile are
 * copied as each read finds them. On disk when this returns.
 */
export async function copyTree(from: string, to: string, method: CopyMethod): Promise<void> {
  const how = method === 'reflink' ? ['--reflink=always'] : ['--reflink=never', '--sparse=auto'];
  await run('cp', ['-a', '--one-file-system', ...how, '--', `${from}/.`, to]);
  // One syncfs for the whole tree: an fsync per file would cost as much and say no more.
  await run('sync', ['-f', to]);
}

/**
 * Bytes the tree's blocks take, as du counts them: each file's allocated blocks (a hard link
 * once), blocks it shares with another file by a reflink counted in full.
 */
export async function treeBytes(dir: string): Promise<number> {
  const { stdout } = await run('du', ['-s', '-x', '-B1', '--', dir]);
  const bytes = Number(stdout.split(/\s/)[0]);
  if (!Number.isSafeInteger(bytes) || bytes < 0) throw new Error(`du printed no size for ${dir}: ${stdout.trim()}`);
  return bytes;
}
