// The CSI spec's size limits on every string and map of a request, derived from the contract's schema and checked before any handler runs.
import type * as protoLoader from '@grpc/proto-loader';
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

/** The parts of a message descriptor (as @grpc/proto-loader renders DescriptorProto) read here. */
interface FieldDescriptor {
  name: string;
  label: string;
  type: string;
  typeName: string;
}
interface MessageDescriptor {
  name: string;
  field: FieldDescriptor[];
  nestedType: MessageDescriptor[];
  options: { mapEntry?: boolean } | null;
}

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

/** Finds the descriptor a field's typeName names, the way protobuf scopes names: innermost message first, then the package. */
function resolve(typeName: string, scopes: readonly MessageDescriptor[], definition: protoLoader.PackageDefinition, pkg: string): MessageDescriptor | undefined {
  const parts = typeName.replace(/^\./, '').split('.');
  const descend = (start: MessageDescriptor | undefined, rest: readonly string[]) =>
    rest.reduce<MessageDescriptor | undefined>((d, part) => d?.nestedType.find((n) => n.name === part), start);
  for (let i = scopes.length - 1; i >= 0; i--) {
    const nested = scopes[i]?.nestedType.find((n) => n.name === parts[0]);
    if (nested) return descend(nested, parts.slice(1));
  }
  // Top-level messages are keyed by their full name; nested ones are reached from their parent.
  for (const qualified of [[...pkg.split('.'), ...parts], parts]) {
    for (let n = qualified.length; n > 0; n--) {
      const d = definition[qualified.slice(0, n).join('.')];
      if (d !== undefined && 'format' in d && d.format === 'Protocol Buffer 3 DescriptorProto') {
        return descend(d.type as MessageDescriptor, qualified.slice(n));
      }
    }
  }
  return undefined;
}

function compile(scopes: readonly MessageDescriptor[], definition: protoLoader.PackageDefinition, pkg: string): Rule[] {
  const message = scopes[scopes.length - 1];
  if (message === undefined || scopes.length > 16) throw new Error('message nesting too deep to check');
  const rules: Rule[] = [];
  for (const f of message.field) {
    const repeated = f.label === 'LABEL_REPEATED';
    if (f.type === 'TYPE_STRING') {
      if (repeated) rules.push({ kind: 'strings', field: f.name, limit: REPEATED_STRING_LIMIT });
      else rules.push({ kind: 'string', field: f.name, limit: PATH_FIELDS.has(f.name) ? PATH_LIMIT : STRING_LIMIT });
    } else if (f.type === 'TYPE_MESSAGE') {
      const target = resolve(f.typeName, scopes, definition, pkg);
      if (target === undefined) throw new Error(`cannot resolve ${f.typeName} (field ${f.name} of ${message.name})`);
      if (target.options?.mapEntry) {
        rules.push({ kind: 'map', field: f.name });
      } else {
        const inner = compile([...scopes, target], definition, pkg);
        if (inner.length > 0) rules.push({ kind: 'message', field: f.name, repeated, rules: inner });
      }
    } else if (f.type === 'TYPE_BYTES') {
      // None in the requests Lode serves; refuse to compile rather than leave one unbounded.
      throw new Error(`bytes field ${f.name} of ${message.name} has no size limit here`);
    }
  }
  return rules;
}

/** The bounds check for requests of `type`, a message of package `pkg` in `definition`. */
export function boundsFor(type: protoLoader.MessageTypeDefinition<object, object>, definition: protoLoader.PackageDefinition, pkg = 'csi.v1'): BoundsCheck {
  const rules = compile([type.type as MessageDescriptor], definition, pkg);
  return (request) => {
    if (isRecord(request)) check(request, rules, '');
  };
}
