// The registry of storage backends: the one place that builds the backend a pool's backend= names.
import type { Backend } from '../pool/backend.js';
import type { PoolConfig } from '../pool/pool.js';
import { LoopBackend } from './loop/loop-backend.js';

/** The backend serving a configuration; nothing else names a backend's class. */
export function createBackend(config: PoolConfig): Backend {
  switch (config.backend) {
    case 'loop':
      return new LoopBackend(config);
    case 'dir':
      throw new Error(`pool ${config.name}: backend dir is not built yet`);
  }
}
