// Parses a pool specification "NAME=DIR[,size=10Gi][,default-size=1Gi][,max-volume-size=5Gi][,backend=loop]".
import * as path from 'node:path';
import { GiB, parseSize } from './sizes.js';
import type { PoolConfig } from './pool.js';

const POOL_NAME = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

export function parsePoolSpec(spec: string): PoolConfig {
  const eq = spec.indexOf('=');
  if (eq <= 0) throw new Error(`pool "${spec}": expected NAME=DIR[,size=..]`);
  const name = spec.slice(0, eq);
  if (!POOL_NAME.test(name)) throw new Error(`pool "${name}": a name is 1-63 lower-case letters, digits or '-'`);
  const [dir = '', ...opts] = spec.slice(eq + 1).split(',');
  if (!path.isAbsolute(dir)) throw new Error(`pool "${name}": directory "${dir}" must be an absolute path`);
  const config: PoolConfig = { name, backend: 'loop', dir: path.resolve(dir), defaultVolumeBytes: GiB };
  for (const opt of opts) {
    const [key = '', value = ''] = opt.split('=', 2);
    const size = () => {
      try {
        const bytes = parseSize(value);
        if (bytes <= 0) throw new Error('must be positive');
        return bytes;
      } catch (err) {
        throw new Error(`pool "${name}": ${key}: ${(err as Error).message}`);
      }
    };
    switch (key) {
      case 'size': config.sizeBytes = size(); break;
      case 'default-size': config.defaultVolumeBytes = size(); break;
      case 'max-volume-size': config.maxVolumeBytes = size(); break;
      case 'backend':
        if (value !== 'loop') throw new Error(`pool "${name}": backend "${value}" is not supported (supported: loop)`);
        break;
      default:
        throw new Error(`pool "${name}": unknown option "${key}" (known: size, default-size, max-volume-size, backend)`);
    }
  }
  return config;
}
