// Reading untyped Kubernetes objects (parsed YAML or JSON bodies) without trusting their shape.

export type Json = Record<string, unknown>;

export function isObject(v: unknown): v is Json {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** The value at a dotted path, undefined where any step is missing or not an object. */
export function at(obj: unknown, path: string): unknown {
  let cur: unknown = obj;
  for (const part of path.split('.')) {
    if (!isObject(cur)) return undefined;
    cur = cur[part];
  }
  return cur;
}

/** The object at `key`, created if absent (for defaulting a copy). */
export function child(obj: Json, key: string): Json {
  const v = obj[key];
  if (isObject(v)) return v;
  const made: Json = {};
  obj[key] = made;
  return made;
}

export function list(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

/** Deep equality of JSON-shaped values (key order ignored). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  // Before the object case: a Date is an object with no own keys, so any two would look equal there.
  if (a instanceof Date || b instanceof Date) return a instanceof Date && b instanceof Date && a.getTime() === b.getTime();
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a).filter((k) => a[k] !== undefined);
    const kb = Object.keys(b).filter((k) => b[k] !== undefined);
    return ka.length === kb.length && ka.every((k) => jsonEqual(a[k], b[k]));
  }
  return false;
}
