// Where pool profiles come from (the --pool-config directory, read by the CLI): this node's pools for a profile label's value, and every profile's pools.
import type { PoolConfig } from '../../../pool/pool.js';

export interface PoolChoice {
  /** The entry the pools were read from: the node's name, profile.<value> or default. */
  entry: string;
  pools: PoolConfig[];
}

/**
 * Given to the driver by its command line when it has both --pool-config and API access; the
 * driver only knows the node's labels, the source knows the directory and checks the pools.
 */
export interface PoolProfileSource {
  /** The node label whose value names the profile, e.g. node.kubernetes.io/instance-type. */
  readonly labelKey: string;
  /**
   * This node's pools, checked and their directories made ready; `profileValue` undefined:
   * the label is unknown or unset. Undefined when no entry applies (none of the node's name,
   * none of its profile, no default); throws when the entry that applies is not usable.
   */
  choose(profileValue: string | undefined): Promise<PoolChoice | undefined>;
  /** Every profile's pools by label value, parsed only: their directories are on other nodes. */
  profiles(): Promise<Map<string, PoolConfig[]>>;
  /** The pools this node last opened, as recorded by `recordOpened`; undefined: none recorded, or nowhere to record. */
  lastOpened(): Promise<PoolConfig[] | undefined>;
  /** Records the pools open now, so a restart with an entry that would drop or shrink one holding volumes keeps it. */
  recordOpened(pools: readonly PoolConfig[]): Promise<void>;
}
