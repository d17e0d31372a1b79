// The hostile landscape under the target root (links out, loops, files in the way) and the sentinel tree the links point into.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';

/**
 * Where every planted link leads: outside the pools and target roots. A driver that follows a
 * link out of the root creates files or mounts here, which the sentinel snapshot catches.
 */
export interface PathLandscape {
  sentinel: string;
  /** Paths inside the target root that are hostile as a stage or publish path. */
  hostile: string[];
  /** The planted links alone. */
  links: string[];
  /** Directories inside the target root where a fresh, ordinary path may be made. */
  plainParents: string[];
}

export async function plantLandscape(root: string, kubelet: string, poolDirs: readonly string[]): Promise<PathLandscape> {
  const sentinel = path.join(root, 'outside');
  // Content the driver must never touch: files with data, an empty file and an empty directory
  // (what a stray removeTarget would delete), and a directory a link makes look like a target.
  await fs.mkdir(path.join(sentinel, 'dir', 'sub'), { recursive: true });
  await fs.mkdir(path.join(sentinel, 'empty-dir'));
  await fs.writeFile(path.join(sentinel, 'precious'), 'do not touch\n');
  await fs.writeFile(path.join(sentinel, 'empty-file'), '');
  await fs.writeFile(path.join(sentinel, 'dir', 'data'), Buffer.alloc(4096, 7));

  const fz = path.join(kubelet, 'fz');
  await fs.mkdir(path.join(fz, 'plain'), { recursive: true });
  await fs.mkdir(path.join(kubelet, 'pods'), { recursive: true });
  await fs.mkdir(path.join(kubelet, 'plugins', 'staging'), { recursive: true });
  await fs.writeFile(path.join(fz, 'a-file'), 'a file where a directory is expected');
  await fs.writeFile(path.join(fz, 'empty-file'), '');
  // A directory with someone else's content: a publish there hides it, and the unpublish must
  // still end the publication (or the publish must be refused).
  await fs.mkdir(path.join(fz, 'non-empty', 'sub'), { recursive: true });
  await fs.writeFile(path.join(fz, 'non-empty', 'sub', 'theirs'), 'not the driver\'s');
  const link = async (name: string, to: string) => { await fs.symlink(to, path.join(fz, name)); return path.join(fz, name); };
  const relToSentinel = path.relative(fz, sentinel);
  const links = [
    await link('dangle-abs', path.join(sentinel, 'made-by-driver')),
    await link('dangle-rel', path.join(relToSentinel, 'made-by-driver-rel')),
    await link('dangle-deep', path.join(sentinel, 'no', 'such', 'dir')),
    await link('to-dir', path.join(sentinel, 'dir')),
    await link('to-empty-dir', path.join(sentinel, 'empty-dir')),
    await link('to-empty-file', path.join(sentinel, 'empty-file')),
    await link('to-file', path.join(sentinel, 'precious')),
    await link('rel-to-dir', path.join(relToSentinel, 'dir')),
    await link('loop-a', path.join(fz, 'loop-b')),
    await link('loop-b', path.join(fz, 'loop-a')),
    await link('self', path.join(fz, 'self')),
    await link('inside', path.join(fz, 'plain')),
    await link('dangle-inside', path.join(fz, 'plain', 'not-yet')),
    ...await Promise.all(poolDirs.map((d, i) => link(`to-pool-${i}`, d))),
  ];
  const hostile = [
    ...links,
    ...links.map((l) => path.join(l, 'child')),
    ...links.map((l) => path.join(l, 'a', 'b')),
    path.join(fz, 'a-file'),
    path.join(fz, 'empty-file'),
    path.join(fz, 'a-file', 'child'),
    path.join(fz, 'empty-file', 'x', 'y'),
    path.join(fz, 'plain'),
    path.join(fz, 'non-empty'),
    kubelet,
    path.join(fz, 'n'.repeat(256)),
    path.join(fz, 'n'.repeat(255)),
    path.join(fz, ...Array.from({ length: 20 }, () => 'd'.repeat(250))),
    ...poolDirs.flatMap((d) => [d, path.join(d, 'volumes'), path.join(d, 'volumes', 'x'), path.dirname(d)]),
  ];
  return { sentinel, hostile, links, plainParents: [path.join(kubelet, 'pods'), path.join(kubelet, 'plugins', 'staging'), path.join(fz, 'plain')] };
}
