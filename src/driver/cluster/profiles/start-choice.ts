// At start, with pool profiles: this node's pools from its profile label, or from its own and the default entry when the label or the API is missing.
import type { KubeClient } from '../../../kube/kube-client.js';
import { describeApiError } from '../../../kube/kube-errors.js';
import type { PoolConfig } from '../../../pool/pool.js';
import { log } from '../../../util/log.js';
import { readProfileValue } from './node-profile.js';
import type { PoolProfileSource } from './pool-source.js';

/**
 * An API that does not answer at start is no reason to stop: the node's own or the default
 * entry serves until the label can be read, and the follower then adds the profile's pools.
 * With no entry that applies (the Node not readable yet, or no profile of its label's value),
 * the driver starts with no pools: it registers and serves what it can, and the follower
 * opens the pools as soon as an entry applies, as it does for any change of the directory.
 */
export async function choosePoolsAtStart(kube: KubeClient, nodeId: string, source: PoolProfileSource): Promise<PoolConfig[]> {
  let value: string | undefined;
  try {
    value = await readProfileValue(kube, nodeId, source.labelKey);
  } catch (err) {
    log('warn', 'pool profiles: cannot read this node\'s labels at start; choosing without the profile', { error: describeApiError(err, `get node ${nodeId}`) });
  }
  const choice = await source.choose(value);
  if (choice === undefined) {
    log('warn', 'pool profiles: no entry of the pool configuration applies to this node yet; starting with no pools, they open once one does', { nodeId, label: source.labelKey, value: value ?? null });
    return [];
  }
  log('info', 'pools of this node', { nodeId, label: source.labelKey, value: value ?? null, entry: choice.entry, pools: choice.pools.map((p) => p.name) });
  return choice.pools;
}
