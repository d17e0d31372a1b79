// Objects as they go over the wire: JSON with the Go API's timestamp form, and apiVersion/kind filled in.
import type { ResourceType } from '../api/resources.js';
import type { AnyObject } from '../api/kinds.js';
import type { Json } from './patch/merge-patch.js';

/** metav1.Time is RFC 3339 to the second; the store keeps Dates, which JSON would print with milliseconds. */
function rfc3339(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * Dates are virtual times; `shiftMs` (the clock's display shift) moves them as they are
 * written, so the store never holds a shifted Date. Text already in an object is left as is.
 */
export function toJsonText(v: unknown, shiftMs = 0): string {
  return JSON.stringify(v, function replacer(this: Record<string, unknown>, key: string, value: unknown) {
    const raw = this[key];
    return raw instanceof Date ? rfc3339(new Date(raw.getTime() + shiftMs)) : value;
  });
}

/** A plain JSON copy (Dates as strings, moved by `shiftMs`), what patches and clients work on. */
export function toJson(v: unknown, shiftMs = 0): Json {
  return JSON.parse(toJsonText(v, shiftMs)) as Json;
}

/** The object with the apiVersion and kind of the resource it is served as (the store keeps whatever the manifest said). */
export function typed(r: ResourceType, o: AnyObject): AnyObject {
  // apiVersion and kind first, as the API server prints them.
  return Object.assign({ apiVersion: r.apiVersion, kind: r.kind }, o, { apiVersion: r.apiVersion, kind: r.kind }) as AnyObject;
}
