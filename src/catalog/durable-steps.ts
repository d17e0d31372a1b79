// The steps volumes and snapshots take alike: marked "deleting" durably before their storage goes, copied with their source's filesystem frozen, and undone when their making fails.
import { freeze, thaw } from '../sys/freeze.js';
import { outsideCall } from '../util/call-signal.js';
import type { RecordStore } from '../pool/record-store.js';
import { failpoint } from '../util/failpoint.js';
import { log } from '../util/log.js';

/**
 * Records a ready volume or snapshot as "deleting", durably, before its storage is released,
 * so a crash before its record is gone leaves a record that the next start (or a retried
 * delete) finishes; storage is never without its record. A "creating" record already says
 * the same to the next start, so it is not rewritten. True when this call wrote the
 * "deleting" record durably: then the record's removal need not be (see destroy).
 */
export async function markDeleting<T extends { id: string; pool: string; state: string }>(what: 'volume' | 'snapshot', record: T, store: RecordStore<T>, point: string): Promise<boolean> {
  if (record.state === 'ready') {
    record.state = 'deleting';
    try {
      await store.put(record);
      failpoint(point);
      return true;
    } catch (err) {
      record.state = 'ready';
      const errno = (err as NodeJS.ErrnoException).code;
      if (errno !== 'ENOSPC' && errno !== 'EDQUOT') throw err;
      // A full filesystem cannot take even the small rewritten record, and refusing would keep
      // a full pool from being emptied. Releasing under the "ready" record is safe as well: a
      // crash before the record goes leaves a ready object whose storage is missing, which
      // staging or a restore reports and a retried delete finishes.
      log('warn', `no space to mark the ${what} deleting; deleting it under its ready record`, { id: record.id, pool: record.pool });
    }
  }
  record.state = 'deleting';
  return false;
}

/** Runs a copy with the filesystem at `mountPoint` frozen, when there is one; it is thawed whatever happens. */
export async function whileFrozen<T>(what: 'snapshot' | 'clone', mountPoint: string | undefined, copy: () => Promise<T>): Promise<T> {
  if (mountPoint === undefined) return copy();
  await freeze(mountPoint);
  failpoint(`${what}:frozen`);
  try {
    return await copy();
  } finally {
    await thaw(mountPoint);
  }
}

/**
 * After a create or snapshot failed with `err`: runs `undo` (even past the call's deadline) and
 * rethrows `err`. An undo that fails too is only logged: whatever is left (a record, storage) is
 * finished by a retried call or at the next start.
 */
export async function undoThenThrow(what: 'create' | 'snapshot', id: string, err: unknown, undo: () => Promise<void>): Promise<never> {
  log('warn', `${what} failed; undoing it`, { id, error: (err as Error).message });
  try {
    await outsideCall(undo);
  } catch (undoErr) {
    log('error', `undo of failed ${what} failed`, { id, error: (undoErr as Error).message });
  }
  throw err;
}
