// Strategic merge patch (application/strategic-merge-patch+json): a merge patch whose lists merge by key where the Go types say so, with the $patch, $setElementOrder, $retainKeys and $deleteFromPrimitiveList directives.
import { isPlainObject, type Json } from './merge-patch.js';
import type { FieldFacts, Struct } from './patch-facts.js';

/** The patch breaks the format's own rules (upstream: 400 BadRequest). */
export class StrategicPatchError extends Error {}

type Obj = Record<string, Json>;

const SET_ORDER = '$setElementOrder/';
const DELETE_PRIMITIVE = '$deleteFromPrimitiveList/';

function directive(o: Obj): string | undefined {
  const d = o.$patch;
  if (d === undefined) return undefined;
  if (d !== 'replace' && d !== 'delete' && d !== 'merge') throw new StrategicPatchError(`unknown patch directive $patch: ${JSON.stringify(d)}`);
  return d;
}

/** A patch object with its directives taken out, the nested ones too (what lands when there is nothing to merge with). */
function strip(v: Json, facts: FieldFacts | undefined): Json {
  if (Array.isArray(v)) return v.filter((x) => !(isPlainObject(x) && (x.$patch === 'replace' || x.$patch === 'delete'))).map((x) => strip(x, facts));
  if (!isPlainObject(v)) return v;
  return mergeMap({}, v, facts?.fields ?? {}, facts?.retainKeys ?? false) ?? {};
}

/**
 * Applies `patch` to `original` (neither is changed). Returns undefined when the patch
 * says `$patch: delete` for the whole object.
 */
export function strategicMergePatch(original: Json, patch: Json, facts: Struct): Json {
  if (!isPlainObject(patch)) throw new StrategicPatchError('a strategic merge patch is a JSON object');
  return mergeMap(isPlainObject(original) ? original : {}, patch, facts, false) ?? {};
}

function mergeMap(original: Obj, patch: Obj, facts: Struct, retainKeys: boolean): Obj | undefined {
  const d = directive(patch);
  if (d === 'delete') return undefined;
  if (d === 'replace') {
    const { $patch: _ignored, ...rest } = patch;
    return mergeMap({}, rest, facts, retainKeys);
  }
  const out: Obj = { ...original };
  const orders = new Map<string, Json[]>();
  let retain: string[] | undefined;
  for (const [k, v] of Object.entries(patch)) {
    if (k === '$patch') continue;
    if (k === '$retainKeys') {
      if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) throw new StrategicPatchError('$retainKeys must be a list of field names');
      retain = v as string[];
      continue;
    }
    if (k.startsWith(SET_ORDER)) {
      if (!Array.isArray(v)) throw new StrategicPatchError(`${k} must be a list`);
      orders.set(k.slice(SET_ORDER.length), v);
      continue;
    }
    if (k.startsWith(DELETE_PRIMITIVE)) {
      const field = k.slice(DELETE_PRIMITIVE.length);
      if (!Array.isArray(v)) throw new StrategicPatchError(`${k} must be a list`);
      const cur = out[field];
      if (Array.isArray(cur)) out[field] = cur.filter((x) => !v.some((y) => JSON.stringify(y) === JSON.stringify(x)));
      continue;
    }
    if (v === null) {
      delete out[k];
      continue;
    }
    const f = facts[k];
    if (Array.isArray(v)) {
      const cur = out[k];
      out[k] = f?.merge ? mergeList(Array.isArray(cur) ? cur : [], v, f) : strip(v, f);
      continue;
    }
    if (isPlainObject(v)) {
      const cur = out[k];
      const merged = mergeMap(isPlainObject(cur) ? cur : {}, v, f?.fields ?? {}, f?.retainKeys ?? false);
      if (merged === undefined) delete out[k];
      else out[k] = merged;
      continue;
    }
    out[k] = v;
  }
  if (retain !== undefined) {
    // A volume's source is one of many fields: $retainKeys names the one kept, so switching emptyDir to a claim drops emptyDir.
    if (!retainKeys) throw new StrategicPatchError('$retainKeys is only allowed on fields with the retainKeys strategy');
    for (const k of Object.keys(out)) if (!retain.includes(k)) delete out[k];
  }
  for (const [field, order] of orders) {
    const cur = out[field];
    if (Array.isArray(cur)) out[field] = ordered(cur, order, facts[field]?.mergeKey);
  }
  return out;
}

function keyOf(item: Json, mergeKey: string): string {
  if (!isPlainObject(item) || !(mergeKey in item)) throw new StrategicPatchError(`map: ${JSON.stringify(item)} does not contain declared merge key: ${mergeKey}`);
  return JSON.stringify(item[mergeKey]);
}

function mergeList(original: Json[], patch: Json[], f: FieldFacts): Json[] {
  // `{$patch: replace}` as an item: the list becomes the patch's other items.
  if (patch.some((x) => isPlainObject(x) && x.$patch === 'replace')) return strip(patch, f) as Json[];
  if (f.mergeKey === undefined) {
    // A list of scalars with the merge strategy: the union, original order first.
    const out = [...original];
    for (const v of patch) if (!out.some((x) => JSON.stringify(x) === JSON.stringify(v))) out.push(v);
    return out;
  }
  const key = f.mergeKey;
  const out = [...original];
  for (const item of patch) {
    const k = keyOf(item, key);
    const i = out.findIndex((x) => isPlainObject(x) && JSON.stringify(x[key]) === k);
    if (isPlainObject(item) && item.$patch === 'delete') {
      if (i >= 0) out.splice(i, 1);
      continue;
    }
    const base = i >= 0 && isPlainObject(out[i]) ? (out[i] as Obj) : {};
    const merged = mergeMap(base, item as Obj, f.fields ?? {}, f.retainKeys ?? false);
    if (merged === undefined) {
      if (i >= 0) out.splice(i, 1);
    } else if (i >= 0) {
      out[i] = merged;
    } else {
      out.push(merged);
    }
  }
  return out;
}

/** `$setElementOrder`: listed items in the listed order, items the patch did not list (server-only) after them in their own order. */
function ordered(list: Json[], order: Json[], mergeKey: string | undefined): Json[] {
  const id = (x: Json): string => JSON.stringify(mergeKey !== undefined && isPlainObject(x) ? x[mergeKey] : x);
  const pos = new Map(order.map((o, i) => [id(o), i]));
  const listed = list.filter((x) => pos.has(id(x))).sort((a, b) => pos.get(id(a))! - pos.get(id(b))!);
  return [...listed, ...list.filter((x) => !pos.has(id(x)))];
}
