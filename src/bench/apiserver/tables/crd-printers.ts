// Tables of custom resources: NAME plus the CRD's additionalPrinterColumns, as apiextensions-apiserver prints them.
import { column, nameOf, NAME_COLUMN, type Printer } from './printer.js';
import { at, isRecord } from './fields.js';
import { ageSince, timestampMs } from './human-duration.js';

/** One additionalPrinterColumns entry of a CRD version (only simple `.a.b.c` JSONPaths, as CRDs allow). */
export interface PrinterColumn { name: string; type: 'string' | 'integer' | 'number' | 'boolean' | 'date'; jsonPath: string; description?: string; priority?: number; format?: string }

/** A CRD version without printer columns gets AGE, as the CRD defaulting gives it. */
const AGE_ONLY: PrinterColumn[] = [{ name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' }];

function valueAt(obj: unknown, jsonPath: string): unknown {
  return at(obj, ...jsonPath.split('.').filter((p) => p !== ''));
}

/**
 * A cell as the CRD table convertor makes it: a missing value is null (kubectl prints
 * <none>), a value of the wrong JSON type is null too, a date is an age.
 */
function cell(type: PrinterColumn['type'], value: unknown, now: Date): unknown {
  if (value === undefined || value === null) return null;
  switch (type) {
    case 'string':
      // The JSONPath printer writes any value as text.
      return typeof value === 'string' ? value : value instanceof Date ? value.toISOString() : isRecord(value) || Array.isArray(value) ? JSON.stringify(value) : String(value);
    case 'integer':
      return typeof value === 'number' ? Math.trunc(value) : null;
    case 'number':
      return typeof value === 'number' ? value : null;
    case 'boolean':
      return typeof value === 'boolean' ? value : null;
    case 'date':
      // The bench's store holds Dates where the wire has RFC 3339 strings.
      if (typeof value !== 'string' && !(value instanceof Date)) return null;
      return timestampMs(value) === undefined ? '<invalid>' : ageSince(value, now);
  }
}

export function crdPrinter(printerColumns: PrinterColumn[]): Printer {
  const cols = printerColumns.length > 0 ? printerColumns : AGE_ONLY;
  return {
    columns: [NAME_COLUMN, ...cols.map((c) => column(c.name, c.type, c.description ?? `The value at ${c.jsonPath}.`, c.priority ?? 0, c.format ?? ''))],
    row: (obj, now) => ({ cells: [nameOf(obj), ...cols.map((c) => cell(c.type, valueAt(obj, c.jsonPath), now))] }),
  };
}

const AGE: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };

/** The snapshot CRDs' printer columns (external-snapshotter's client/config/crd, v1), in their order. */
export const SNAPSHOT_PRINTERS: Record<string, Printer> = {
  VolumeSnapshot: crdPrinter([
    { name: 'ReadyToUse', type: 'boolean', jsonPath: '.status.readyToUse', description: 'Whether the snapshot can be restored from.' },
    { name: 'SourcePVC', type: 'string', jsonPath: '.spec.source.persistentVolumeClaimName', description: 'The claim the snapshot is taken of.' },
    { name: 'SourceSnapshotContent', type: 'string', jsonPath: '.spec.source.volumeSnapshotContentName', description: 'The existing content a pre-provisioned snapshot names.' },
    { name: 'RestoreSize', type: 'string', jsonPath: '.status.restoreSize', description: 'The smallest volume the snapshot restores into.' },
    { name: 'SnapshotClass', type: 'string', jsonPath: '.spec.volumeSnapshotClassName', description: 'The snapshot class asked for.' },
    { name: 'SnapshotContent', type: 'string', jsonPath: '.status.boundVolumeSnapshotContentName', description: 'The content the snapshot is bound to.' },
    { name: 'CreationTime', type: 'date', jsonPath: '.status.creationTime', description: 'When the storage system cut the snapshot.' },
    AGE,
  ]),
  VolumeSnapshotClass: crdPrinter([
    { name: 'Driver', type: 'string', jsonPath: '.driver' },
    { name: 'DeletionPolicy', type: 'string', jsonPath: '.deletionPolicy', description: 'Whether contents made through the class go when their snapshot goes.' },
    AGE,
  ]),
  VolumeSnapshotContent: crdPrinter([
    { name: 'ReadyToUse', type: 'boolean', jsonPath: '.status.readyToUse', description: 'Whether the snapshot can be restored from.' },
    { name: 'RestoreSize', type: 'integer', jsonPath: '.status.restoreSize', description: 'The snapshot\'s full size in bytes.' },
    { name: 'DeletionPolicy', type: 'string', jsonPath: '.spec.deletionPolicy', description: 'Whether the storage snapshot goes when its VolumeSnapshot goes.' },
    { name: 'Driver', type: 'string', jsonPath: '.spec.driver', description: 'The CSI driver that made the snapshot.' },
    { name: 'VolumeSnapshotClass', type: 'string', jsonPath: '.spec.volumeSnapshotClassName', description: 'The snapshot class of the content.' },
    { name: 'VolumeSnapshot', type: 'string', jsonPath: '.spec.volumeSnapshotRef.name', description: 'The VolumeSnapshot the content is bound to.' },
    { name: 'VolumeSnapshotNamespace', type: 'string', jsonPath: '.spec.volumeSnapshotRef.namespace', description: 'That VolumeSnapshot\'s namespace.' },
    AGE,
  ]),
};
