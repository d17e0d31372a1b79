// The CSI spec's size limits on every string and map of a request, derived from the contract's schema and checked before any handler runs.
import { CSI_PACKAGE, csiPackageScopes, type SchemaNode } from '../../csi/proto.js';
import { invalidArgument } from './errors.js';
import { printable } from './printable.js';

/*
 * The limits, from the spec's "Size Limits" section and the fields that override it:
 * - a string is at most 128 bytes, a map<string, string> at most 4 KiB (keys and values
 *   together; the spec sets no separate limit on a key or a value);
 * - target_path, staging_target_path and volume_path override it with "the maximum path length
 *   allowed by the operating system": PATH_MAX is 4096 on Linux and counts the terminating NUL,
 *   so the kernel refuses any path of more than 4095 bytes (ENAMETOOLONG) anyway;
 * - mount_flags: "the total size of this repeated field SHALL NOT exceed 4 KiB". It is measured
 *   as mount(8) hands the flags to the kernel, joined by commas, which also bounds their count;
 * - node_id (256 bytes) is the one other override, and it only occurs in NodeGetInfo's answer
 *   and in ControllerPublishVolume, which Lode does not serve. starting_token and secrets have
 *   no override: 128 bytes and 4 KiB.
 */
export const STRING_LIMIT = 128;
export const MAP_LIMIT = 4096;
export const PATH_LIMIT = 4095;
export const REPEATED_STRING_LIMIT = 4096;
const PATH_FIELDS = new Set(['target_path', 'staging_target_path', 'volume_path']);

type Rule =
  | { kind: 'string'; field: string; limit: number }
  | { kind: 'strings'; field: string; limit: number }
  | { kind: 'map'; field: string }
  | { kind: 'message'; field: string; repeated: boolean; rules: Rule[] };

/** Checks one decoded request; throws INVALID_ARGUMENT naming the first field over its limit. */
export type BoundsCheck = (request: unknown) => void;

const bytes = (s: string) => Buffer.byteLength(s, 'utf8');
const tooLong = (where: string, size: number, limit: number, what = '') =>
  invalidArgument(`${where}${what} is ${size} bytes; the limit is ${limit} (CSI size limits)`);

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function check(value: Record<string, unknown>, rules: readonly Rule[], prefix: string): void {
  for (const rule of rules) {
    const v = value[rule.field];
    const where = prefix + rule.field;
    if (rule.kind === 'string') {
      if (typeof v === 'string' && bytes(v) > rule.limit) throw tooLong(where, bytes(v), rule.limit);
    } else if (rule.kind === 'strings') {
      if (!Array.isArray(v)) continue;
      let total = Math.max(0, v.length - 1); // the commas between them
      for (const [i, s] of v.entries()) {
        if (typeof s !== 'string') continue;
        const size = bytes(s);
        if (size > rule.limit) throw tooLong(`${where}[${i}]`, size, rule.limit);
        total += size;
        if (total > rule.limit) throw tooLong(where, total, rule.limit, ` (joined by commas, ${v.length} entries)`);
      }
    } else if (rule.kind === 'map') {
      if (!isRecord(v)) continue;
      let total = 0;
      for (const [k, s] of Object.entries(v)) {
        total += bytes(k) + (typeof s === 'string' ? bytes(s) : 0);
        if (total > MAP_LIMIT) {
          throw invalidArgument(`${where} is over ${MAP_LIMIT} bytes (keys and values together, CSI size limits); at key "${printable(k)}"`);
        }
      }
    } else if (rule.repeated) {
      if (!Array.isArray(v)) continue;
      for (const [i, item] of v.entries()) if (isRecord(item)) check(item, rule.rules, `${where}[${i}].`);
    } else if (isRecord(v)) {
      check(v, rule.rules, `${where}.`);
    }
  }
}

/** protobuf's scalar types other than string and bytes: nothing to bound. */
const SCALARS = new Set(['double', 'float', 'int32', 'int64', 'uint32', 'uint64', 'sint32', 'sint64', 'fixed32', 'fixed64', 'sfixed32', 'sfixed64', 'bool']);

/** The schema node a field's type names, the way protobuf scopes names: innermost message first, out to the root. */
function resolve(typeName: string, scopes: readonly SchemaNode[]): SchemaNode | undefined {
  const parts = typeName.replace(/^\./, '').split('.');
  for (let i = scopes.length - 1; i >= 0; i--) {
    let node = scopes[i]?.nested?.[parts[0] ?? ''];
    for (const part of parts.slice(1)) node = node?.nested?.[part];
    if (node !== undefined) return node;
  }
  return undefined;
}

/** The rules of the message last in `scopes` (the root, the package's parts, then the messages it is nested in). */
function compile(scopes: readonly SchemaNode[], name: string): Rule[] {
  const message = scopes[scopes.length - 1];
  if (message === undefined || scopes.length > 16) throw new Error('message nesting too deep to check');
  const rules: Rule[] = [];
  for (const [field, f] of Object.entries(message.fields ?? {})) {
    const repeated = f.rule === 'repeated';
    if (f.keyType !== undefined) {
      rules.push({ kind: 'map', field });
    } else if (f.type === 'string') {
      if (repeated) rules.push({ kind: 'strings', field, limit: REPEATED_STRING_LIMIT });
      else rules.push({ kind: 'string', field, limit: PATH_FIELDS.has(field) ? PATH_LIMIT : STRING_LIMIT });
    } else if (f.type === 'bytes') {
      // None in the requests Lode serves; refuse to compile rather than leave one unbounded.
      throw new Error(`bytes field ${field} of ${name} has no size limit here`);
    } else if (!SCALARS.has(f.type)) {
      const target = resolve(f.type, scopes);
      if (target === undefined) throw new Error(`cannot resolve ${f.type} (field ${field} of ${name})`);
      if (target.fields !== undefined) {
        const inner = compile([...scopes, target], `${name}.${field}`);
        if (inner.length > 0) rules.push({ kind: 'message', field, repeated, rules: inner });
      } else if (target.values === undefined) {
        throw new Error(`${f.type} (field ${field} of ${name}) is neither a message nor an enum`);
      }
    }
  }
  return rules;
}

/** The bounds check for requests of `type`, a message of the contract's package (its name there: "CreateVolumeRequest"). */
export function boundsFor(type: string): BoundsCheck {
  const scopes = csiPackageScopes();
  const message = scopes.at(-1)?.nested?.[type];
  if (message?.fields === undefined) throw new Error(`${CSI_PACKAGE}.${type} is not a message of the schema`);
  const rules = compile([...scopes, message], type);
  return (request) => {
    if (isRecord(request)) check(request, rules, '');
  };
}
