// Generator: reads upstream generated.proto files and writes the compact protobuf schema of the kinds the bench serves (schema.gen.ts).
// Run: node dist/src/bench/apiserver/protobuf/generate-schema.js VENDOR_DIR MODULE_LABEL > src/bench/apiserver/protobuf/schema.gen.ts
// VENDOR_DIR holds k8s.io/api/... and k8s.io/apimachinery/... (a Go vendor/ tree, or a GOPATH/src).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import protobuf from 'protobufjs';
import { RESOURCES } from '../../api/resources.js';

/** Messages the server sends or reads besides the kinds and their lists. */
const EXTRA_ROOTS = [
  'k8s.io.apimachinery.pkg.apis.meta.v1.Status',
  'k8s.io.apimachinery.pkg.apis.meta.v1.WatchEvent',
  'k8s.io.apimachinery.pkg.apis.meta.v1.DeleteOptions',
  'k8s.io.apimachinery.pkg.runtime.Unknown',
  'k8s.io.api.autoscaling.v1.Scale',
];

/** The proto package of a served group: core for the legacy group, the group's first DNS label otherwise, as k8s.io/api lays out its packages. */
export function protoPackage(group: string, version: string): string {
  return `k8s.io.api.${group === '' ? 'core' : group.split('.')[0]}.${version}`;
}

/**
 * [id, type] | [id, type, 'r'] (repeated) | [id, valueType, 'm', keyType] (map) | [id, type, 'i']
 * (a Go embedded struct whose JSON is inlined) | [id, type, 'p'] (a Go pointer: set even when zero)
 */
type FieldSpec = [number, string] | [number, string, 'r' | 'i' | 'p'] | [number, string, 'm', string];

/** Facts of the Go types that generated.proto does not carry, keyed `Struct.protoName`. */
interface GoFacts {
  /** Embedded structs whose JSON is inlined into the parent (`json:",inline"`). */
  inline: Set<string>;
  /** Pointer fields: on the wire only when set, so a zero value sent is a value (`storageClassName: ""`, `replicas: 0`). */
  pointer: Set<string>;
}

/** Reads the Go types beside a generated.proto (types.go and friends) for the facts the proto lacks. */
function goFacts(protoFile: string): GoFacts {
  const out: GoFacts = { inline: new Set(), pointer: new Set() };
  const dir = dirname(protoFile);
  for (const f of readdirSync(dir)) {
    if (!f.endsWith('.go') || f.startsWith('zz_') || f.startsWith('generated')) continue;
    let struct = '';
    for (const line of readFileSync(join(dir, f), 'utf8').split('\n')) {
      const t = /^type (\w+) struct \{/.exec(line);
      if (t) struct = t[1]!;
      if (struct === '') continue;
      const m = /json:",inline"\s+protobuf:"[^"]*name=(\w+)/.exec(line);
      if (m) out.inline.add(`${struct}.${m[1]}`);
      const p = /^\s+\w+\s+\*[\w.]+\s+`.*protobuf:"[^"]*name=(\w+)/.exec(line);
      if (p) out.pointer.add(`${struct}.${p[1]}`);
    }
  }
  return out;
}

function protoFileFor(vendor: string, pkg: string): string {
  // k8s.io.api.core.v1 -> k8s.io/api/core/v1/generated.proto
  return join(vendor, 'k8s.io', ...pkg.slice('k8s.io.'.length).split('.'), 'generated.proto');
}

function main(): void {
  const [vendor, moduleLabel] = process.argv.slice(2);
  if (vendor === undefined || moduleLabel === undefined) {
    process.stderr.write('usage: generate-schema.js VENDOR_DIR "MODULE_LABEL" (e.g. "k8s.io/api v0.32.0, k8s.io/apimachinery v0.32.0 (vendor/ of kubernetes-csi/external-provisioner v5.2.0)")\n');
    process.exit(2);
  }
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => (isAbsolute(target) ? target : join(vendor, target));
  const kinds: Record<string, string> = {};
  const files = new Set<string>();
  for (const r of RESOURCES) {
    const file = protoFileFor(vendor, protoPackage(r.group, r.version));
    if (!existsSync(file)) continue; // a custom resource (snapshot.storage.k8s.io): served as JSON only
    files.add(file);
    kinds[`${r.apiVersion}/${r.kind}`] = `${protoPackage(r.group, r.version)}.${r.kind}`;
  }
  for (const f of [...files, join(vendor, 'k8s.io/apimachinery/pkg/runtime/generated.proto'), join(vendor, 'k8s.io/api/autoscaling/v1/generated.proto')]) {
    root.loadSync(f, { keepCase: true });
  }
  root.resolveAll();
  const facts = new Map<string, GoFacts>();
  const factsOf = (t: protobuf.Type): GoFacts => {
    const pkg = t.fullName.slice(1, -(t.name.length + 1));
    let f = facts.get(pkg);
    if (f === undefined) {
      f = goFacts(join(vendor, 'k8s.io', ...pkg.slice('k8s.io.'.length).split('.'), 'generated.proto'));
      facts.set(pkg, f);
    }
    return f;
  };
  const messages: Record<string, Record<string, FieldSpec>> = {};
  const queue = [...Object.values(kinds).flatMap((k) => [k, `${k}List`]), ...EXTRA_ROOTS];
  while (queue.length > 0) {
    const name = queue.shift()!;
    if (messages[name] !== undefined) continue;
    const t = root.lookupType(name);
    const fields: Record<string, FieldSpec> = {};
    for (const f of t.fieldsArray) {
      const resolved = f.resolvedType;
      const type = resolved instanceof protobuf.Type ? resolved.fullName.slice(1) : f.type;
      if (resolved instanceof protobuf.Type) queue.push(type);
      if (f instanceof protobuf.MapField) fields[f.name] = [f.id, type, 'm', f.keyType];
      else if (f.repeated) fields[f.name] = [f.id, type, 'r'];
      else if (factsOf(t).inline.has(`${t.name}.${f.name}`)) fields[f.name] = [f.id, type, 'i'];
      else if (factsOf(t).pointer.has(`${t.name}.${f.name}`)) fields[f.name] = [f.id, type, 'p'];
      else fields[f.name] = [f.id, type];
    }
    messages[name] = fields;
  }
  const sorted = Object.fromEntries(Object.keys(messages).sort().map((k) => [k, messages[k]]));
  const out: string[] = [];
  out.push('// Generated: the protobuf schema (message, field name, number, type) of the built-in kinds the bench serves. Do not edit.');
  out.push(`// From the upstream generated.proto files of ${moduleLabel}.`);
  out.push(`// Regenerate: npm run build && node dist/src/bench/apiserver/protobuf/generate-schema.js VENDOR_DIR '${moduleLabel}' > src/bench/apiserver/protobuf/schema.gen.ts`);
  out.push('');
  out.push('/** [number, type] | [number, type, "r"] (repeated) | [number, value type, "m", key type] (map) | [number, type, "i"] (JSON inlined into the parent, Go\'s embedded struct) | [number, type, "p"] (a Go pointer: a zero value sent is a value). */');
  out.push('export type FieldSpec = readonly [number, string] | readonly [number, string, \'r\' | \'i\' | \'p\'] | readonly [number, string, \'m\', string];');
  out.push('');
  out.push(`export const SCHEMA_ORIGIN = ${JSON.stringify(moduleLabel)};`);
  out.push('');
  out.push('/** apiVersion/kind -> message. */');
  out.push(`export const KIND_MESSAGES: Readonly<Record<string, string>> = ${JSON.stringify(kinds, null, 1)};`);
  out.push('');
  out.push('/** message -> field name -> spec. */');
  out.push('export const MESSAGES: Readonly<Record<string, Readonly<Record<string, FieldSpec>>>> = {');
  for (const [name, fields] of Object.entries(sorted)) out.push(` ${JSON.stringify(name)}: ${JSON.stringify(fields)},`);
  out.push('};');
  process.stdout.write(out.join('\n') + '\n');
}

if (process.argv[1] !== undefined && process.argv[1].endsWith('generate-schema.js')) main();
