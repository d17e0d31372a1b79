// The pool profiles of a --pool-config directory, read afresh on every call so a changed ConfigMap is seen without a restart.
import * as path from 'node:path';
import type { PoolChoice, PoolProfileSource } from '../driver/cluster/profiles/pool-source.js';
import type { PoolConfig } from '../pool/pool.js';
import { parsePoolSpec } from '../pool/pool-spec.js';
import { checkPools, NoPoolEntryError, profileEntries, readPoolConfig } from './pool-config.js';

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
