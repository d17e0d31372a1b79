// Server-side printing: objects of one kind as the meta.k8s.io/v1 Table that `kubectl get` asks for.
import { resourceForKind } from '../../api/resources.js';
import { CORE_PRINTERS } from './core-printers.js';
import { SNAPSHOT_PRINTERS } from './crd-printers.js';
import { DEFAULT_PRINTER } from './default-printer.js';
import { EVENT_PRINTER } from './event-printer.js';
import { isRecord } from './fields.js';
import { NODE_PRINTER } from './node-printer.js';
import { POD_PRINTER } from './pod-printer.js';
import type { Printer, TableColumn } from './printer.js';

export type { TableColumn } from './printer.js';
import { CSI_DRIVER_PRINTER, CSI_STORAGE_CAPACITY_PRINTER, PVC_PRINTER, PV_PRINTER, STORAGE_CLASS_PRINTER } from './storage-printers.js';

export interface TableOptions { now: Date; includeObject: 'None' | 'Metadata' | 'Object' }
export type IncludeObject = TableOptions['includeObject'];

const PRINTERS: Record<string, Printer> = {
  Pod: POD_PRINTER,
  Node: NODE_PRINTER,
  PersistentVolume: PV_PRINTER,
  PersistentVolumeClaim: PVC_PRINTER,
  StorageClass: STORAGE_CLASS_PRINTER,
  CSIDriver: CSI_DRIVER_PRINTER,
  CSIStorageCapacity: CSI_STORAGE_CAPACITY_PRINTER,
  Event: EVENT_PRINTER,
  ...CORE_PRINTERS,
  ...SNAPSHOT_PRINTERS,
};

/** The printer the API server uses for a kind; kinds without one get NAME and CREATED AT. */
export function printerFor(kind: string): Printer {
  return PRINTERS[kind] ?? DEFAULT_PRINTER;
}

/** Column definitions of a kind's table (the same for every object of it). */
export function tableColumns(kind: string): TableColumn[] {
  return printerFor(kind).columns.map((c) => ({ ...c }));
}

/**
 * What a row carries besides its cells, as the API server's includeObject says: the whole
 * object (its apiVersion and kind filled in, as the server encodes it), only its metadata as a
 * PartialObjectMetadata (the default; kubectl takes the NAMESPACE column of `-A` from it), or
 * nothing. The server writes "nothing" as `"object": null`: the row field is a struct that
 * Go's encoder does not omit.
 */
function rowObject(kind: string, obj: Record<string, unknown>, includeObject: TableOptions['includeObject']): Record<string, unknown> | null {
  switch (includeObject) {
    case 'None':
      return null;
    case 'Metadata':
      return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: isRecord(obj['metadata']) ? obj['metadata'] : {} };
    case 'Object': {
      const apiVersion = typeof obj['apiVersion'] === 'string' ? obj['apiVersion'] : resourceForKind(kind)?.apiVersion;
      return { ...(apiVersion === undefined ? {} : { apiVersion }), kind: typeof obj['kind'] === 'string' ? obj['kind'] : kind, ...obj };
    }
  }
}

/** A meta.k8s.io/v1 Table for these objects of one kind (apiVersion/kind/metadata{resourceVersion}/columnDefinitions/rows with cells and object). */
export function toTable(kind: string, objects: Record<string, unknown>[], opts: TableOptions & { resourceVersion: string }): Record<string, unknown> {
  const printer = printerFor(kind);
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: { resourceVersion: opts.resourceVersion },
    columnDefinitions: printer.columns.map((c) => ({ ...c })),
    rows: objects.map((obj) => {
      const printed = printer.row(obj, opts.now);
      return {
        cells: printed.cells,
        ...(printed.conditions === undefined ? {} : { conditions: printed.conditions }),
        object: rowObject(kind, obj, opts.includeObject),
      };
    }),
  };
}
