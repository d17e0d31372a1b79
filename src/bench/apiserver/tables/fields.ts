// Typed reads of fields from an object of unknown shape: what the printers need from a JSON object without trusting it.

export type Json = Record<string, unknown>;

export function isRecord(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);
}

/** The value at a path of keys, or undefined where any step is missing or not an object. */
export function at(obj: unknown, ...path: string[]): unknown {
  let cur: unknown = obj;
  for (const k of path) {
    if (!isRecord(cur)) return undefined;
    cur = cur[k];
  }
  return cur;
}

export function str(obj: unknown, ...path: string[]): string {
  const v = at(obj, ...path);
  return typeof v === 'string' ? v : '';
}

export function rec(obj: unknown, ...path: string[]): Json {
  const v = at(obj, ...path);
  return isRecord(v) ? v : {};
}

export function list(obj: unknown, ...path: string[]): unknown[] {
  const v = at(obj, ...path);
  return Array.isArray(v) ? v : [];
}

export function num(obj: unknown, ...path: string[]): number {
  const v = at(obj, ...path);
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

/** A *bool field: its value, or `fallback` when unset (the printers' nil-pointer defaults). */
export function bool(obj: unknown, fallback: boolean, ...path: string[]): boolean {
  const v = at(obj, ...path);
  return typeof v === 'boolean' ? v : fallback;
}

/** labels.FormatLabels: "k=v,k2=v2" sorted by key, "<none>" for none. */
export function formatLabels(labels: unknown): string {
  if (!isRecord(labels)) return '<none>';
  const keys = Object.keys(labels).sort();
  if (keys.length === 0) return '<none>';
  return keys.map((k) => `${k}=${String(labels[k])}`).join(',');
}
