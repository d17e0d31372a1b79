// The Node objects the scale benchmarks apply: node-001... with one 256Mi pool each and a typical node's allocatable.
import { ANN_LODE_POOLS } from '../src/bench/api/annotations.js';

/** `count` nodes with a 256Mi pool each (room for ten 16Mi claims, ext4's smallest Lode volume, and more). */
export function benchNodes(count: number): unknown[] {
  const objs: unknown[] = [];
  for (let n = 1; n <= count; n++) {
    objs.push({
      apiVersion: 'v1', kind: 'Node',
      metadata: { name: `node-${String(n).padStart(3, '0')}`, annotations: { [ANN_LODE_POOLS]: 'local=256Mi' } },
      status: { allocatable: { cpu: '16', memory: '64Gi', pods: '110' } },
    });
  }
  return objs;
}
