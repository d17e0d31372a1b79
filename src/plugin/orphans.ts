// `kubectl lode orphans`: the volumes the drivers' orphan checks reported (Warning Events on their Nodes), less those a PV names again or that were deleted since.
import type { CoreV1Event, V1PersistentVolume } from '@kubernetes/client-node';
import { REASON_DELETED, REASON_IN_USE, REASON_ORPHANED } from '../driver/cluster/orphans/orphan-check.js';
import { age, type Column } from './plugin-output.js';
import { bytesOf, showBytes } from './quantities.js';
import { eventTime, isDriverEvent } from './status.js';

export interface OrphanRow {
  node: string;
  /** The driver's volume id (what a PV's volumeHandle would name). */
  id: string;
  /** The name CreateVolume was given (the PV name the provisioner chose). */
  name: string;
  pool: string;
  sizeBytes: number | null;
  /** Since when no PV names it, as the orphan check counts. */
  unnamedSince: string | null;
  /** What holds it, as the check found when it tried to delete it; null when it did not try (--delete-orphans off). */
  inUse: string | null;
  /** Whether the driver deletes it once nothing uses it. */
  deleteOrphans: boolean;
}

// The orphan check's own wording (orphan-check.ts), read back.
const ORPHANED = /^volume (\S+) \((.*)\) in pool (\S+), (\S+), is named by no PersistentVolume of \S+ since (\S+); (.*)$/;
const IN_USE = /^orphaned volume (\S+) in pool \S+ is in use \((.*)\); not deleted$/;
const DELETED = /^deleted orphaned volume (\S+) /;

export function orphanRows(driverName: string, events: readonly CoreV1Event[], pvs: readonly V1PersistentVolume[]): OrphanRow[] {
  const named = new Set(pvs.map((pv) => pv.spec?.csi?.volumeHandle).filter((h): h is string => h !== undefined));
  const mine = events.filter((e) => isDriverEvent(e, driverName) && e.involvedObject?.kind === 'Node');
  const key = (node: string, id: string): string => `${node}\0${id}`;
  const deletedAt = new Map<string, string>();
  const inUse = new Map<string, string>();
  for (const e of mine) {
    const node = e.involvedObject?.name ?? '';
    const message = e.message ?? '';
    if (e.reason === REASON_DELETED) {
      const id = DELETED.exec(message)?.[1];
      if (id !== undefined) deletedAt.set(key(node, id), eventTime(e) ?? '');
    } else if (e.reason === REASON_IN_USE) {
      const m = IN_USE.exec(message);
      if (m?.[1] !== undefined) inUse.set(key(node, m[1]), m[2] ?? '');
    }
  }
  const rows = new Map<string, OrphanRow>();
  for (const e of mine) {
    if (e.reason !== REASON_ORPHANED) continue;
    const m = ORPHANED.exec(e.message ?? '');
    if (m === null) continue;
    const node = e.involvedObject?.name ?? '';
    const [, id = '', name = '', pool = '', size, since, action = ''] = m;
    const k = key(node, id);
    // A PV names it again, or the driver deleted it after this report: no longer an orphan.
    if (named.has(id)) continue;
    const deleted = deletedAt.get(k);
    if (deleted !== undefined && deleted >= (eventTime(e) ?? '')) continue;
    rows.set(k, { node, id, name, pool, sizeBytes: bytesOf(size) ?? null, unnamedSince: since ?? null, inUse: inUse.get(k) ?? null, deleteOrphans: !action.startsWith('not deleted') });
  }
  return [...rows.values()].sort((a, b) => a.node.localeCompare(b.node) || a.id.localeCompare(b.id));
}

export function orphanColumns(nowMs: number): Column<OrphanRow>[] {
  return [
    { header: 'NODE', cell: (r) => r.node },
    { header: 'VOLUME', cell: (r) => r.id },
    { header: 'POOL', cell: (r) => r.pool },
    { header: 'SIZE', cell: (r) => showBytes(r.sizeBytes ?? undefined) },
    { header: 'AGE', cell: (r) => (r.unnamedSince === null ? '-' : age(Date.parse(r.unnamedSince), nowMs)) },
    // Only a driver with --delete-orphans looks at what holds an orphan (it does so before deleting).
    { header: 'IN USE', cell: (r) => (r.inUse !== null ? 'yes' : r.deleteOrphans ? 'no' : 'unknown'), colour: (r) => (r.inUse !== null ? 'yellow' : undefined) },
    { header: 'NAME', wide: true, cell: (r) => r.name },
    { header: 'UNNAMED SINCE', wide: true, cell: (r) => r.unnamedSince ?? '-' },
    { header: 'HELD BY', wide: true, cell: (r) => r.inUse ?? '-' },
    { header: 'DELETE', wide: true, cell: (r) => (r.deleteOrphans ? 'once unused' : 'no (--delete-orphans off)') },
  ];
}
