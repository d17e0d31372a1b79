// At start, with pool profiles: this node's pools from its profile label, or from its own and the default entry when the label or the API is missing; a pool the last run opened that the new entry would drop or shrink while it holds volumes is kept as it was.
import type { KubeClient } from '../../../kube/kube-client.js';
import { describeApiError } from '../../../kube/kube-errors.js';
import type { PoolConfig } from '../../../pool/pool.js';
import { log } from '../../../util/log.js';
import { diskHolding } from './disk-holding.js';
import { readProfileValue } from './node-profile.js';
import { planPoolChange, type PoolHolding } from './pool-change-plan.js';
import type { PoolProfileSource } from './pool-source.js';

function inside(a: string, b: string): boolean {
  return a === b || a.startsWith(b.endsWith('/') ? b : `${b}/`);
}

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
  if (choice === undefined) log('warn', 'pool profiles: no entry of the pool configuration applies to this node yet; it opens the pools of one once one does', { nodeId, label: source.labelKey, value: value ?? null });
  else log('info', 'pools of this node', { nodeId, label: source.labelKey, value: value ?? null, entry: choice.entry, pools: choice.pools.map((p) => p.name) });
  return keepRefused(await source.lastOpened(), choice?.pools ?? []);
}

/**
 * A DaemonSet rolled by a ConfigMap change restarts the driver with the new entry: the refusal
 * the running driver makes must hold at start too. A pool of the last run that the new entry
 * drops, moves or shrinks while its directory holds records stays open as it was (the
 * follower then reports the refusal with an Event and the metric); new pools inside such a
 * pool's directory wait. Everything else is taken as the entry says.
 */
export async function keepRefused(previous: readonly PoolConfig[] | undefined, wanted: readonly PoolConfig[]): Promise<PoolConfig[]> {
  if (previous === undefined) return [...wanted];
  const holding = new Map<string, PoolHolding>();
  for (const p of previous) holding.set(p.name, await diskHolding(p));
  const plan = planPoolChange(previous, wanted, (name) => holding.get(name) ?? { volumes: 0, snapshots: 0, quarantined: 0, allocatedBytes: 0 });
  if (plan.refused.length === 0) return [...wanted];
  const refused = new Set(plan.refused.map((r) => r.pool));
  for (const r of plan.refused) log('error', 'pool profiles: change refused at start; the pool opens as it was', { pool: r.pool, reason: r.reason });
  const kept = previous.filter((p) => refused.has(p.name));
  const out = wanted.map((w) => kept.find((k) => k.name === w.name) ?? w)
    .filter((w) => refused.has(w.name) || !kept.some((k) => inside(w.dir, k.dir) || inside(k.dir, w.dir)));
  for (const k of kept) if (!out.some((o) => o.name === k.name)) out.push(k);
  return out;
}
