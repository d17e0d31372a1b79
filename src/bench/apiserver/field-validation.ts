// Server-side field validation (?fieldValidation=Strict|Warn|Ignore): fields the kind's schema does not declare are dropped, warned about, or refused.
import type { ResourceType } from '../api/resources.js';
import { dropUnknownFields, schemaOf } from './known-fields.js';
import { StatusError } from './status.js';

export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

/** The request's directive; Warn when absent, as the API server's default since 1.27. */
export function fieldValidationOf(q: URLSearchParams): FieldValidation {
  const v = q.get('fieldValidation') ?? '';
  if (v === '') return 'Warn';
  if (v === 'Strict' || v === 'Warn' || v === 'Ignore') return v;
  throw new StatusError(400, 'BadRequest', `fieldValidation: Unsupported value: ${JSON.stringify(v)}: supported values: "Ignore", "Strict", "Warn"`);
}

/** The strict decoder's text for a list of unknown fields. */
function strictDecodingError(paths: string[]): string {
  return `strict decoding error: ${paths.map((p) => `unknown field ${JSON.stringify(p)}`).join(', ')}`;
}

/** The text of a Warning header for one unknown field: code 299, agent "-", as the API server sends it. */
export function warningHeader(text: string): string {
  return `299 - ${JSON.stringify(text)}`;
}

/**
 * A create or update body (parsed JSON or YAML): unknown fields are dropped in place (the
 * typed decoder has nowhere to put them). Strict refuses the request with upstream's decode
 * error (400, `<Kind> in version "<v>" cannot be handled as a <Kind>: strict decoding
 * error: unknown field "metadata.foo"`); Warn returns one warning per field; Ignore none.
 * Kinds without a published schema are taken as sent.
 */
export function checkBodyFields(r: ResourceType, body: unknown, mode: FieldValidation): string[] {
  const schema = schemaOf(r);
  if (schema === undefined) return [];
  const unknown = dropUnknownFields(schema, body);
  if (unknown.length === 0 || mode === 'Ignore') return [];
  if (mode === 'Strict') {
    const o = body as { kind?: unknown; apiVersion?: unknown };
    const kind = typeof o.kind === 'string' && o.kind !== '' ? o.kind : r.kind;
    const apiVersion = typeof o.apiVersion === 'string' && o.apiVersion !== '' ? o.apiVersion : r.apiVersion;
    const version = apiVersion.slice(apiVersion.indexOf('/') + 1);
    throw new StatusError(400, 'BadRequest', `${kind} in version ${JSON.stringify(version)} cannot be handled as a ${r.kind}: ${strictDecodingError(unknown)}`);
  }
  return unknown.map((p) => `unknown field ${JSON.stringify(p)}`);
}

/** A value as Go's %+v prints a decoded JSON value (maps with sorted keys): how upstream quotes a patch in its error. */
function goValue(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(goValue).join(' ')}]`;
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `map[${Object.keys(o).sort().map((k) => `${k}:${goValue(o[k])}`).join(' ')}]`;
  }
  return v === null ? '<nil>' : String(v);
}

/**
 * A patched object: unknown fields the patch brought are dropped. Strict refuses the patch
 * as upstream's patch handler does (422, field `patch`, the strict decoding error as the
 * reason; the value quoted is the patch as Go prints a map for a strategic merge patch, the
 * patched object's JSON for a merge or JSON patch); Warn returns warnings.
 */
export function checkPatchedFields(r: ResourceType, patched: unknown, patch: unknown, strategic: boolean, mode: FieldValidation): string[] {
  const schema = schemaOf(r);
  if (schema === undefined) return [];
  const before = strategic || mode !== 'Strict' ? '' : JSON.stringify(patched);
  const unknown = dropUnknownFields(schema, patched);
  if (unknown.length === 0 || mode === 'Ignore') return [];
  if (mode === 'Strict') {
    const reason = strictDecodingError(unknown);
    const value = strategic ? goValue(patch) : before;
    throw new StatusError(422, 'Invalid', ` "" is invalid: patch: Invalid value: ${JSON.stringify(value)}: ${reason}`, { causes: [{ reason: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(value)}: ${reason}`, field: 'patch' }] });
  }
  return unknown.map((p) => `unknown field ${JSON.stringify(p)}`);
}
