// Which pools this node gets: a directory with one file per node name (a mounted ConfigMap) or "default", and where pool directories may lie.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';

export interface PoolConfigChoice {
  /** The file the pool list was read from. */
  file: string;
  /** Pool specifications in file order. */
  specs: string[];
}

/**
 * Reads DIR/<nodeId>, else DIR/default: one pool specification per line, blank lines and
 * lines starting with '#' ignored. Node names never contain '/', so the name is a file name.
 */
export async function readPoolConfig(dir: string, nodeId: string): Promise<PoolConfigChoice> {
  for (const name of [nodeId, 'default']) {
    const file = path.join(dir, name);
    let text: string;
    try {
      // A ConfigMap volume's keys are symlinks into its ..data directory; stat follows them.
      if (!(await fs.stat(file)).isFile()) continue;
      text = await fs.readFile(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw new Error(`--pool-config: cannot read ${file}: ${(err as Error).message}`);
    }
    const specs = text.split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'));
    if (specs.length === 0) throw new Error(`--pool-config: ${file} lists no pools`);
    return { file, specs };
  }
  throw new Error(`--pool-config ${dir} has no file "${nodeId}" (this node) and no "default": no pools for this node`);
}

/**
 * With a pool root (the one host directory mounted into the container), every pool directory
 * must lie inside it, or the pool would live in the container and vanish with it. Directories
 * under ROOT/pools/ sit on the node's own filesystem and are made when missing; any other
 * must exist already - it should be a mounted disk, so a disk that failed to mount stops the
 * driver instead of filling the root filesystem.
 */
export async function preparePoolDir(pool: string, dir: string, root: string): Promise<void> {
  const under = (d: string, base: string) => d.startsWith(base + path.sep) && d.length > base.length + 1;
  const resolvedRoot = path.resolve(root);
  if (!under(dir, resolvedRoot)) {
    throw new Error(`pool "${pool}": directory ${dir} must lie under ${resolvedRoot} (--pool-root, the host directory mounted into this container)`);
  }
  // A symlink inside the root may point anywhere: what exists of the path must resolve inside
  // the root before anything is made there, and the directory used must be inside too.
  const realRoot = await fs.realpath(resolvedRoot);
  const inside = async (): Promise<void> => {
    let existing = dir;
    for (;;) {
      try {
        const real = await fs.realpath(existing);
        if (real !== realRoot && !under(real, realRoot)) throw new Error(`pool "${pool}": directory ${dir} resolves to a place outside ${realRoot} (--pool-root)`);
        return;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
        existing = path.dirname(existing); // missing: the caller says so, naming the directory
      }
    }
  };
  await inside();
  if (under(dir, path.join(resolvedRoot, 'pools'))) {
    await fs.mkdir(dir, { recursive: true, mode: 0o700 });
    await inside();
  }
}
