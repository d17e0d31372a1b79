// Printing as kubectl prints: plain columns under upper-case headers (more of them with -o wide), or the rows as JSON or YAML; colour only on a terminal.
import { stringify } from 'yaml';
import type { OutputFormat } from './plugin-args.js';

/** One column: its header, whether only -o wide shows it, and how a row fills it. */
export interface Column<T> {
  header: string;
  wide?: boolean;
  cell: (row: T) => string;
  /** A colour for the cell on a terminal (the text stays the same). */
  colour?: (row: T) => Colour | undefined;
}

export type Colour = 'red' | 'yellow' | 'green';
const CODES: Record<Colour, string> = { red: '31', yellow: '33', green: '32' };

/** Colour when stdout is a terminal and NO_COLOR is not set, as kubectl's own coloured output decides. */
export function useColour(stream: NodeJS.WriteStream): boolean {
  return stream.isTTY === true && (process.env['NO_COLOR'] ?? '') === '';
}

/** Columns separated by three spaces, as kubectl's tabwriter leaves them; trailing blanks trimmed. */
export function table<T>(rows: readonly T[], columns: readonly Column<T>[], format: OutputFormat, colour: boolean): string {
  const shown = columns.filter((c) => format === 'wide' || c.wide !== true);
  const cells = rows.map((r) => shown.map((c) => c.cell(r)));
  const widths = shown.map((c, i) => Math.max(c.header.length, ...cells.map((row) => (row[i] ?? '').length)));
  const line = (texts: string[], paint?: (i: number) => Colour | undefined): string => texts.map((t, i) => {
    const padded = i === texts.length - 1 ? t : t.padEnd(widths[i] ?? 0);
    const c = paint?.(i);
    // The padding stays outside the colour, so columns line up the same with and without it.
    return c !== undefined && colour ? `\u001b[${CODES[c]}m${t}\u001b[0m${padded.slice(t.length)}` : padded;
  }).join('   ').trimEnd();
  return [line(shown.map((c) => c.header)), ...rows.map((r, n) => line(cells[n] ?? [], (i) => shown[i]?.colour?.(r)))].join('\n') + '\n';
}

/** The structured forms: a list's rows under `items` (as kubectl's List), a report's fields at the top. */
export function structured(kind: string, driverName: string, body: unknown[] | object, format: 'json' | 'yaml'): string {
  const doc = { apiVersion: 'kubectl-lode/v1', kind, driver: driverName, ...(Array.isArray(body) ? { items: body } : body) };
  return format === 'json' ? `${JSON.stringify(doc, null, 4)}\n` : stringify(doc);
}

/** "3m", "2h", "5d": kubectl's short ages. */
export function age(fromMs: number, nowMs: number): string {
  const s = Math.max(0, Math.floor((nowMs - fromMs) / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 120) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h`;
  return `${Math.floor(h / 24)}d`;
}
