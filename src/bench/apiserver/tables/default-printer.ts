// The table of a built-in kind without a printer (Roles, LimitRanges, ...): NAME and CREATED AT, a timestamp not an age.
import { column, nameOf, NAME_COLUMN, type Printer } from './printer.js';
import { at } from './fields.js';
import { timestampMs } from './human-duration.js';

/** time.RFC3339 in UTC, whole seconds; a missing time prints as Go's zero time does. */
export function rfc3339(value: unknown): string {
  const t = timestampMs(value);
  if (t === undefined) return '0001-01-01T00:00:00Z';
  return new Date(Math.floor(t / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** The apiserver's default table convertor: kubectl shows the CREATED AT cell as sent, e.g. 2026-01-01T00:00:00Z. */
export const DEFAULT_PRINTER: Printer = {
  columns: [NAME_COLUMN, column('Created At', 'date', 'When the object was created.')],
  row: (obj) => ({ cells: [nameOf(obj), rfc3339(at(obj, 'metadata', 'creationTimestamp'))] }),
};
