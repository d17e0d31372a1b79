// The pool profiles of a --pool-config directory, read afresh on every call so a changed ConfigMap is seen without a restart.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { isBackendName } from '../pool/pool.js';
import { writeFileAtomic } from '../util/atomic-file.js';
import { log } from '../util/log.js';
import type { PoolChoice, PoolProfileSource } from '../driver/cluster/profiles/pool-source.js';
import type { PoolConfig } from '../pool/pool.js';
import { parsePoolSpec } from '../pool/pool-spec.js';
import { checkPools, NoPoolEntryError, profileEntries, readPoolConfig } from './pool-config.js';

/** Under --pool-root: the pools this node's driver last opened (the host directory outlives the container). */
export const OPENED_POOLS_FILE = '.lode-opened-pools.json';

/** A recorded pool as far as it can be trusted: the fields planning and opening need, of the right types. */
function isPoolConfig(v: unknown): v is PoolConfig {
  if (v === null || typeof v !== 'object') return false;
  const o = v as Record<string, unknown>;
  return typeof o.name === 'string' && typeof o.dir === 'string' && path.isAbsolute(o.dir) && isBackendName(String(o.backend))
    && typeof o.defaultVolumeBytes === 'number' && typeof o.directIo === 'boolean'
    && (o.sizeBytes === undefined || typeof o.sizeBytes === 'number');
}

export class ConfigDirProfiles implements PoolProfileSource {
  constructor(private readonly dir: string, private readonly nodeId: string, readonly labelKey: string, private readonly poolRoot: string | undefined) {}

  async choose(profileValue: string | undefined): Promise<PoolChoice | undefined> {
    let chosen;
    try {
      chosen = await readPoolConfig(this.dir, this.nodeId, profileValue);
    } catch (err) {
      if (err instanceof NoPoolEntryError) return undefined;
      throw err;
    }
    return { entry: path.basename(chosen.file), pools: await checkPools(chosen.specs, chosen.file, this.poolRoot) };
  }

  private get openedFile(): string | undefined {
    return this.poolRoot !== undefined ? path.join(this.poolRoot, OPENED_POOLS_FILE) : undefined;
  }

  async lastOpened(): Promise<PoolConfig[] | undefined> {
    const file = this.openedFile;
    if (file === undefined) return undefined;
    let text: string;
    try {
      text = await fs.readFile(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    if (!Array.isArray(parsed) || !parsed.every(isPoolConfig)) {
      log('warn', 'pool profiles: the record of the pools opened last is not readable; ignoring it', { file });
      return undefined;
    }
    return parsed;
  }

  async recordOpened(pools: readonly PoolConfig[]): Promise<void> {
    const file = this.openedFile;
    if (file !== undefined) await writeFileAtomic(file, `${JSON.stringify(pools, null, 2)}\n`);
  }

  async profiles(): Promise<Map<string, PoolConfig[]>> {
    const out = new Map<string, PoolConfig[]>();
    for (const [value, specs] of await profileEntries(this.dir)) {
      try {
        out.set(value, specs.map((s) => parsePoolSpec(s)));
      } catch (err) {
        throw new Error(`${path.join(this.dir, `profile.${value}`)}: ${(err as Error).message}`);
      }
    }
    return out;
  }
}
