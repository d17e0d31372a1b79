// How a copy of a volume in use (a snapshot, a clone) is made a point in time: which filesystem to freeze, or why it cannot be.
import type { Backend, SnapshotSupport } from '../../pool/backend.js';
import type { VolumeRecord } from '../../pool/volume-record.js';
import { findMount } from '../../sys/mounts.js';
import { attachedDevice } from './materialise.js';
import { failedPrecondition } from '../rpc/errors.js';

/**
 * The staging path to freeze around a copy of `source`, or undefined when none is needed: the
 * backend's copy is a point in time by itself, the volume is a directory (its files are copied
 * as they are; docs/backends.md says what that guarantees), or it is not mounted on this node.
 * A raw block volume in use has no filesystem to freeze: copying it while a pod writes would
 * mix old and new blocks, so that is refused.
 */
export async function freezePathFor(source: VolumeRecord, backend: Backend, support: SnapshotSupport): Promise<string | undefined> {
  if (backend.kind !== 'block' || support.consistentCopy()) return undefined;
  if (source.accessType === 'block') {
    if ((await attachedDevice(source, backend)) !== undefined) {
      throw failedPrecondition(`volume ${source.id} is a raw block volume in use, and pool ${source.pool} copies it (${support.method()}), which is no point in time while a pod writes: stop its pod first`);
    }
    return undefined;
  }
  if (source.staging === null || (await findMount(source.staging)) === undefined) return undefined;
  return source.staging;
}
