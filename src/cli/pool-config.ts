// Which pools this node gets: a directory with one file per node name (a mounted ConfigMap) or "default", and where pool directories may lie.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { PoolConfig } from '../pool/pool.js';
import { parsePoolSpec } from '../pool/pool-spec.js';

export interface PoolConfigChoice {
  /** The file the pool list was read from. */
  file: string;
  /** Pool specifications in file order. */
  specs: string[];
}

/** The directory has no entry for this node: neither its name, nor its profile, nor "default". */
export class NoPoolEntryError extends Error {}

/** The ConfigMap key of a profile: every label value is a valid key after this prefix (both allow [-._a-zA-Z0-9]). */
export const PROFILE_PREFIX = 'profile.';

/** The node label whose value names a node's profile, unless --profile-label says another. */
export const DEFAULT_PROFILE_LABEL = 'node.kubernetes.io/instance-type';

/**
 * The entries that apply to a node, most specific first: its own name, then the profile of its
 * label's value (when the driver knows it: with API access), then "default". A per-node entry
 * wins over a profile so that adding profiles never changes a node an operator named.
 */
export function entryNames(nodeId: string, profileValue: string | undefined): string[] {
  return [nodeId, ...(profileValue ? [PROFILE_PREFIX + profileValue] : []), 'default'];
}

/** One pool specification per line, blank lines and lines starting with '#' ignored. */
export function specLines(text: string): string[] {
  return text.split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'));
}

/**
 * Reads DIR/<nodeId>, else DIR/profile.<profileValue>, else DIR/default: one pool
 * specification per line. Node names never contain '/', so the name is a file name.
 */
export async function readPoolConfig(dir: string, nodeId: string, profileValue?: string): Promise<PoolConfigChoice> {
  const names = entryNames(nodeId, profileValue);
  for (const name of names) {
    const text = await readEntry(dir, name);
    if (text === undefined) continue;
    const file = path.join(dir, name);
    const specs = specLines(text);
    if (specs.length === 0) throw new Error(`--pool-config: ${file} lists no pools`);
    return { file, specs };
  }
  const profile = profileValue ? `, no "${PROFILE_PREFIX}${profileValue}" (its profile)` : '';
  throw new NoPoolEntryError(`--pool-config ${dir} has no file "${nodeId}" (this node)${profile} and no "default": no pools for this node`);
}

/** The text of DIR/NAME, or undefined when there is no such entry. */
export async function readEntry(dir: string, name: string): Promise<string | undefined> {
  const file = path.join(dir, name);
  try {
    // A ConfigMap volume's keys are symlinks into its ..data directory; stat follows them.
    if (!(await fs.stat(file)).isFile()) return undefined;
    return await fs.readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`--pool-config: cannot read ${file}: ${(err as Error).message}`);
  }
}

/** The profiles DIR holds, by label value: every entry named profile.<value>. */
export async function profileEntries(dir: string): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  // A ConfigMap volume also holds ..data and timestamped directories; their names start with "..".
  for (const name of (await fs.readdir(dir)).sort()) {
    if (!name.startsWith(PROFILE_PREFIX) || name.length === PROFILE_PREFIX.length) continue;
    const text = await readEntry(dir, name);
    if (text !== undefined) out.set(name.slice(PROFILE_PREFIX.length), specLines(text));
  }
  return out;
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

/**
 * The pools of a list of specifications, checked as the driver needs them before it opens any:
 * names given once, directories that exist (made under ROOT/pools/), none inside another.
 * `file`: where the list came from, named in errors about a specification.
 */
export async function checkPools(specs: readonly string[], file: string | undefined, poolRoot: string | undefined): Promise<PoolConfig[]> {
  const pools = specs.map((spec) => {
    try {
      return parsePoolSpec(spec);
    } catch (err) {
      throw file !== undefined ? new Error(`${file}: ${(err as Error).message}`) : err;
    }
  });
  const names = new Set<string>();
  for (const p of pools) {
    if (names.has(p.name)) throw new Error(`pool "${p.name}" is given twice`);
    names.add(p.name);
    if (poolRoot !== undefined) await preparePoolDir(p.name, p.dir, poolRoot);
    let st;
    try {
      st = await fs.stat(p.dir);
    } catch {
      throw new Error(`pool "${p.name}": directory ${p.dir} does not exist`);
    }
    if (!st.isDirectory()) throw new Error(`pool "${p.name}": ${p.dir} is not a directory`);
  }
  for (const a of pools) for (const b of pools) {
    if (a !== b && (a.dir === b.dir || a.dir.startsWith(b.dir + path.sep))) throw new Error(`pools "${a.name}" and "${b.name}" overlap (${a.dir}, ${b.dir})`);
  }
  return pools;
}
