// What a pool not yet open holds, read from its directory: its volume and snapshot record files.
import { promises as fs } from 'node:fs';
import { recordsDir, snapshotsDir, type PoolConfig } from '../../../pool/pool.js';
import { RECORD_SUFFIX } from '../../../pool/record-store.js';
import type { PoolHolding } from './pool-change-plan.js';

async function recordFiles(dir: string): Promise<number> {
  try {
    return (await fs.readdir(dir)).filter((f) => f.endsWith(RECORD_SUFFIX)).length;
  } catch (err) {
    // No directory (a disk not mounted, a pool never used): nothing of it can be reached.
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw err;
  }
}

/**
 * Before the catalog opens, a pool's records are what it holds: each volume and snapshot has a
 * record file (catalog-opening.ts reads the same). Bytes are not summed: one record is enough to
 * refuse dropping or shrinking the pool.
 */
export async function diskHolding(config: PoolConfig): Promise<PoolHolding> {
  return { volumes: await recordFiles(recordsDir(config)), snapshots: await recordFiles(snapshotsDir(config)), quarantined: 0, allocatedBytes: 0 };
}
