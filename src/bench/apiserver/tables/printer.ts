// What a kind's table printer is: its column definitions and how one object becomes a row of cells.
import { at, str, type Json } from './fields.js';
import { ageSince } from './human-duration.js';

/** metav1.TableColumnDefinition. */
export interface TableColumn { name: string; type: string; format: string; description: string; priority: number }

/** metav1.TableRowCondition: the printers mark finished pods with one. */
export interface RowCondition { type: string; status: string; reason: string; message: string }

export interface PrintedRow { cells: unknown[]; conditions?: RowCondition[] }

/**
 * The columns are always the full ("wide") set: the API server prints every column and
 * marks the -o wide ones with priority 1; kubectl drops those unless asked.
 */
export interface Printer {
  columns: TableColumn[];
  row(obj: Json, now: Date): PrintedRow;
}

/** A column definition; descriptions are ours (kubectl never shows them), names, types and formats are the server's. */
export function column(name: string, type: string, description: string, priority = 0, format = ''): TableColumn {
  return { name, type, format, description, priority };
}

export const NAME_COLUMN = column('Name', 'string', 'The object name, unique within its namespace.', 0, 'name');
export const AGE_COLUMN = column('Age', 'string', 'Time since the object was created.');

export function nameOf(obj: Json): string {
  return str(obj, 'metadata', 'name');
}

export function ageOf(obj: Json, now: Date): string {
  return ageSince(at(obj, 'metadata', 'creationTimestamp'), now);
}

/** A printer whose row is NAME, then `cells`, then AGE: the shape most core printers have. */
export function namedAged(middle: TableColumn[], cells: (obj: Json, now: Date) => unknown[], wide: TableColumn[] = [], wideCells?: (obj: Json, now: Date) => unknown[]): Printer {
  return {
    columns: [NAME_COLUMN, ...middle, AGE_COLUMN, ...wide],
    row: (obj, now) => ({ cells: [nameOf(obj), ...cells(obj, now), ageOf(obj, now), ...(wideCells?.(obj, now) ?? [])] }),
  };
}
