// The registry of storage backends: the one place that builds the backend a pool's backend= names.
import type { Backend } from '../pool/backend.js';
import type { PoolConfig } from '../pool/pool.js';
import { DirBackend } from './dir/dir-backend.js';
import { LoopBackend } from './loop/loop-backend.js';
import { LvmBackend } from './lvm/lvm-backend.js';

/** The backend serving a configuration; nothing else names a backend's class. */
export function createBackend(config: PoolConfig): Backend {
  switch (config.backend) {
    case 'loop':
      return new LoopBackend(config);
    case 'dir':
      return new DirBackend(config);
    case 'lvm':
      return new LvmBackend(config);
  }
}
