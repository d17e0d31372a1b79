// The registry of storage backends: the names a pool's backend= may take, and the one place that opens a pool of each.
import { LoopPool } from './loop-pool.js';
import type { Pool, PoolConfig } from './pool.js';

/** Every backend Lode has, by the name a pool specification gives it. */
export const BACKEND_NAMES = ['loop'] as const;
export type BackendName = (typeof BACKEND_NAMES)[number];

export function isBackendName(value: string): value is BackendName {
  return (BACKEND_NAMES as readonly string[]).includes(value);
}

/** The pool object serving a configuration; nothing else names a backend's class. */
export function createPool(config: PoolConfig): Pool {
  switch (config.backend) {
    case 'loop':
      return new LoopPool(config);
  }
}
