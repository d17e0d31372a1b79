// Parses a pool specification "NAME=DIR[,backend=loop|dir|lvm][,vg=VG][,thin-pool=LV][,overprovision=N][,snapshot-size=20%][,size=10Gi][,default-size=1Gi][,max-volume-size=5Gi][,reserve=20%][,inline-max-size=1Gi][,direct-io=on]".
import * as path from 'node:path';
import { GiB } from './sizes.js';
import { parseBytes } from '../util/quantity.js';
import { LVM_NAME } from '../sys/lvm.js';
import { BACKEND_NAMES, isBackendName, type PoolConfig, type PoolReserve } from './pool.js';

const POOL_NAME = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
const KNOWN = 'size, default-size, max-volume-size, reserve, inline-max-size, direct-io, backend, vg, thin-pool, overprovision, thin-alert, snapshot-size';

/** Thin pools are overprovisioned up to this ratio at most: beyond it a full pool is a certainty, not a risk. */
const MAX_OVERPROVISION = 100;

export function parsePoolSpec(spec: string): PoolConfig {
  const eq = spec.indexOf('=');
  if (eq <= 0) throw new Error(`pool "${spec}": expected NAME=DIR[,size=..]`);
  const name = spec.slice(0, eq);
  if (!POOL_NAME.test(name)) throw new Error(`pool "${name}": a name is 1-63 lower-case letters, digits or '-'`);
  const [dir = '', ...opts] = spec.slice(eq + 1).split(',');
  if (!path.isAbsolute(dir)) throw new Error(`pool "${name}": directory "${dir}" must be an absolute path`);
  const config: PoolConfig = { name, backend: 'loop', dir: path.resolve(dir), defaultVolumeBytes: GiB, directIo: true };
  let directIoGiven = false;
  const lvm: { vg?: string; thinPool?: string; overprovision?: number; alertPercent?: number; snapshotSize?: PoolReserve } = {};
  const lvmName = (value: string, key: string): string => {
    if (!LVM_NAME.test(value)) throw new Error(`pool "${name}": ${key} "${value}" is not an LVM name (1-64 of a-z A-Z 0-9 + _ . -, not starting with -)`);
    return value;
  };
  const ratio = (value: string, key: string, min: number, max: number): number => {
    const n = Number(value);
    if (value.trim() === '' || !Number.isFinite(n) || n < min || n > max) throw new Error(`pool "${name}": ${key} must be a number from ${min} to ${max}, not "${value}"`);
    return n;
  };
  for (const opt of opts) {
    const [key = '', value = ''] = opt.split('=', 2);
    const size = () => {
      try {
        const bytes = parseBytes(value);
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
      case 'inline-max-size': config.inlineMaxBytes = size(); break;
      case 'reserve': config.reserve = parseReserve(name, value, size); break;
      case 'direct-io':
        if (value !== 'on' && value !== 'off') throw new Error(`pool "${name}": direct-io must be on or off, not "${value}"`);
        config.directIo = value === 'on';
        directIoGiven = true;
        break;
      case 'vg': lvm.vg = lvmName(value, key); break;
      case 'thin-pool': lvm.thinPool = lvmName(value, key); break;
      case 'overprovision': lvm.overprovision = ratio(value, key, 1, MAX_OVERPROVISION); break;
      case 'thin-alert': lvm.alertPercent = ratio(value.replace(/%$/, ''), key, 1, 100); break;
      case 'snapshot-size': lvm.snapshotSize = parseSnapshotSize(name, value, size); break;
      case 'backend':
        if (!isBackendName(value)) throw new Error(`pool "${name}": backend "${value}" is not supported (supported: ${BACKEND_NAMES.join(', ')})`);
        config.backend = value;
        break;
      default:
        throw new Error(`pool "${name}": unknown option "${key}" (known: ${KNOWN})`);
    }
  }
  // Only loop devices have a data path to choose; a directory volume is the disk itself.
  if (directIoGiven && config.backend !== 'loop') throw new Error(`pool "${name}": direct-io applies to backend=loop only (a ${config.backend} volume's data goes straight to its filesystem)`);
  if (config.backend === 'lvm') {
    if (lvm.vg === undefined) throw new Error(`pool "${name}": backend=lvm needs vg=, the volume group its volumes are made in`);
    // The VG says what it can hold; a second, fixed figure would disagree with it as soon as anyone else used the VG.
    if (config.sizeBytes !== undefined) throw new Error(`pool "${name}": size applies to loop and dir pools; an lvm pool follows its volume group (use reserve= to leave space to others)`);
    if (lvm.thinPool === undefined && (lvm.overprovision !== undefined || lvm.alertPercent !== undefined)) {
      throw new Error(`pool "${name}": overprovision and thin-alert apply to thin pools only (give thin-pool=)`);
    }
    if (lvm.thinPool !== undefined && lvm.snapshotSize !== undefined) {
      throw new Error(`pool "${name}": snapshot-size applies to thick lvm pools only (a thin snapshot shares its thin pool and needs no area of its own)`);
    }
    config.lvm = { vg: lvm.vg, overprovision: lvm.overprovision ?? 1, alertPercent: lvm.alertPercent ?? 90 };
    if (lvm.thinPool !== undefined) config.lvm.thinPool = lvm.thinPool;
    if (lvm.snapshotSize !== undefined) config.lvm.snapshotSize = lvm.snapshotSize;
  } else if (Object.keys(lvm).length > 0) {
    throw new Error(`pool "${name}": vg, thin-pool, overprovision, thin-alert and snapshot-size apply to backend=lvm only`);
  }
  // A sized pool's budget is fixed; a reserve there would be a second, conflicting limit.
  if (config.sizeBytes !== undefined && config.reserve !== undefined) {
    throw new Error(`pool "${name}": reserve applies to pools without size= (they follow their filesystem's free space); give one or the other`);
  }
  return config;
}

/** "20%" (of the filesystem's size) or a size such as "5Gi". */
function parseReserve(pool: string, value: string, size: () => number): PoolReserve {
  const m = /^(\d+(?:\.\d+)?)%$/.exec(value.trim());
  if (!m) return { bytes: size() };
  const percent = Number(m[1]);
  if (!(percent > 0 && percent < 100)) throw new Error(`pool "${pool}": reserve: ${value} must be more than 0% and less than 100%`);
  return { percent };
}

/**
 * "25%" of each origin's size, up to 100% (more than a whole rewrite would ever need, bar
 * LVM's own few percent of records, which a size may add), or a size such as "2Gi".
 */
function parseSnapshotSize(pool: string, value: string, size: () => number): PoolReserve {
  const m = /^(\d+(?:\.\d+)?)%$/.exec(value.trim());
  if (!m) return { bytes: size() };
  const percent = Number(m[1]);
  if (!(percent > 0 && percent <= 100)) throw new Error(`pool "${pool}": snapshot-size: ${value} must be more than 0% and at most 100%`);
  return { percent };
}
