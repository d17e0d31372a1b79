// The `lode.csi.dev/pools` Node annotation: which Lode pools a simulated node has, of which backend, and how large each is.
import { parseQuantity } from '../../util/quantity.js';

/** One pool of a simulated node. */
export interface PoolSpec {
  name: string;
  sizeBytes: number;
  /** loop: image files in a directory; dir: quota directories on a btrfs of the node's own. */
  backend: 'loop' | 'dir';
}

/**
 * "fast=dir:200Mi,bulk=1Gi" -> pools in the order written (the first is the driver's default
 * pool). A size alone is a loop-image pool; "dir:" before it a quota-directory pool on a btrfs
 * disk of the node's own.
 */
export function parsePoolsAnnotation(value: string): PoolSpec[] {
  const pools: PoolSpec[] = [];
  for (const part of value.split(',').map((s) => s.trim()).filter((s) => s !== '')) {
    const eq = part.indexOf('=');
    if (eq <= 0) throw new Error(`"${part}" is not NAME=SIZE`);
    const name = part.slice(0, eq).trim();
    if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(name)) throw new Error(`pool name "${name}" must be a DNS label`);
    if (pools.some((p) => p.name === name)) throw new Error(`pool "${name}" listed twice`);
    let value = part.slice(eq + 1).trim();
    let backend: PoolSpec['backend'] = 'loop';
    const colon = value.indexOf(':');
    if (colon >= 0) {
      const given = value.slice(0, colon).trim();
      if (given !== 'loop' && given !== 'dir') throw new Error(`pool "${name}": backend "${given}" is not loop or dir`);
      backend = given;
      value = value.slice(colon + 1).trim();
    }
    let size: number;
    try {
      size = parseQuantity(value);
    } catch {
      throw new Error(`pool "${name}": size "${value}" is not a quantity`);
    }
    if (!(size > 0)) throw new Error(`pool "${name}": size must be positive`);
    pools.push({ name, sizeBytes: Math.floor(size), backend });
  }
  if (pools.length === 0) throw new Error('no pools listed');
  return pools;
}
