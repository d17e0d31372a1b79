// RFC 7386 JSON merge patch (application/merge-patch+json): objects merge key by key, null removes, anything else replaces.

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

export function isPlainObject(v: unknown): v is Record<string, Json> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

export function mergePatch(target: Json | undefined, patch: Json): Json {
  if (!isPlainObject(patch)) return patch;
  const out: Record<string, Json> = isPlainObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}
