// A scenario's pool profiles (`poolProfiles`): the pools of each value of a node label, written for each node as the --pool-config directory its driver reads, with that node's own directories.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parsePoolsAnnotation, type PoolSpec } from '../api/node-pools.js';

/** The driver's default --profile-label. */
export const DEFAULT_BENCH_PROFILE_LABEL = 'node.kubernetes.io/instance-type';

export interface BenchPoolProfiles {
  /** The node label whose value picks a profile (the drivers get it as --profile-label). */
  label: string;
  /** Pools per label value, written as the `lode.csi.dev/pools` annotation is ("fast=64Mi,bulk=dir:128Mi"). */
  profiles: ReadonlyMap<string, PoolSpec[]>;
}

/** Reads `poolProfiles: {label?, profiles: {VALUE: POOLS}}`; errors name the field. */
export function parseBenchPoolProfiles(raw: unknown, where: string): BenchPoolProfiles {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new Error(`${where}: expected a mapping with profiles (and label)`);
  const { label = DEFAULT_BENCH_PROFILE_LABEL, profiles, ...rest } = raw as Record<string, unknown>;
  if (Object.keys(rest).length > 0) throw new Error(`${where}: unknown field(s) ${Object.keys(rest).join(', ')} (known: label, profiles)`);
  if (typeof label !== 'string' || label === '') throw new Error(`${where}.label: expected a label key`);
  if (profiles === null || typeof profiles !== 'object' || Array.isArray(profiles) || Object.keys(profiles).length === 0) throw new Error(`${where}.profiles: expected a mapping of label value to pools`);
  const out = new Map<string, PoolSpec[]>();
  for (const [value, pools] of Object.entries(profiles as Record<string, unknown>)) {
    if (!/^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/.test(value)) throw new Error(`${where}.profiles: "${value}" is not a label value`);
    if (typeof pools !== 'string') throw new Error(`${where}.profiles.${value}: expected pools as the lode.csi.dev/pools annotation writes them`);
    try {
      out.set(value, parsePoolsAnnotation(pools));
    } catch (err) {
      throw new Error(`${where}.profiles.${value}: ${(err as Error).message}`);
    }
  }
  return { label, profiles: out };
}

/** One line of a pool configuration entry: a pool of this node, as the bench gives --pool. */
export function poolSpecLine(p: PoolSpec, dir: string): string {
  // Inline ephemeral volumes up to the pool's size, as the bench's --pool pools allow.
  return `${p.name}=${dir},backend=${p.backend},size=${p.sizeBytes},inline-max-size=${p.sizeBytes}`;
}

/**
 * Writes DIR/profile.<value> for every profile, each naming this node's pool directories (on a
 * real cluster every node has its own /var/lib/lode; here each node has its own directory).
 * No entry of the node's name and no "default": the node can only get pools by its label.
 */
export function writeProfileDir(dir: string, profiles: BenchPoolProfiles, poolDir: (pool: string) => string): void {
  mkdirSync(dir, { recursive: true });
  for (const [value, pools] of profiles.profiles) {
    writeFileSync(join(dir, `profile.${value}`), `${pools.map((p) => poolSpecLine(p, poolDir(p.name))).join('\n')}\n`);
  }
}
