// Whether a pool makes a CSI inline ephemeral volume of a given size: off unless the pool's inline-max-size allows it.
import type { PoolConfig } from '../../pool/pool.js';
import { humanBytes } from '../../util/quantity.js';
import { invalidArgument, resourceExhausted } from '../rpc/errors.js';

/**
 * Inline volumes are made at mount time, unseen by the scheduler's capacity check and by
 * ResourceQuota, so any pod author could fill a pool with them: a pool makes them only when
 * its operator said how large one may be. Throws the CSI error to answer, naming the option.
 */
export function requireInlineAllowed(pool: Pick<PoolConfig, 'name' | 'inlineMaxBytes'>, sizeBytes: number, nodeId: string): void {
  if (pool.inlineMaxBytes === undefined) {
    throw invalidArgument(`pool "${pool.name}" on node ${nodeId} does not make inline ephemeral volumes; its pool specification needs inline-max-size= (the largest one allowed) to enable them`);
  }
  if (sizeBytes > pool.inlineMaxBytes) {
    throw resourceExhausted(`pool "${pool.name}" on node ${nodeId} makes inline ephemeral volumes up to ${humanBytes(pool.inlineMaxBytes)} (inline-max-size); ${humanBytes(sizeBytes)} asked`);
  }
}
