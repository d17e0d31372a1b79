// Test helper: checks snapshot.storage.k8s.io/v1 objects against their CRD schemas, written out by hand (kubernetes-models has no types for them).
import { Namespace } from 'kubernetes-models/v1/Namespace';
import { unknownFields } from './strict-fields.js';

// Written from the v1 openAPIV3Schema of external-snapshotter v8.6.0's CRDs,
// client/config/crd/snapshot.storage.k8s.io_volumesnapshotclasses.yaml and
// client/config/crd/snapshot.storage.k8s.io_volumesnapshots.yaml: the fields, their types,
// enums and required lists, and the CEL rules that apply to a new object. Only what a
// manifest may set: status belongs to the snapshot-controller.

type Field =
  | { type: 'string'; enum?: readonly string[]; nonEmpty?: boolean }
  | { type: 'stringMap' }
  | { type: 'object'; fields: Record<string, Field>; required?: readonly string[]; exactlyOne?: readonly string[] };

const VOLUME_SNAPSHOT_CLASS: Record<string, Field> = {
  driver: { type: 'string' },
  deletionPolicy: { type: 'string', enum: ['Delete', 'Retain'] },
  parameters: { type: 'stringMap' },
};

const VOLUME_SNAPSHOT: Record<string, Field> = {
  spec: {
    type: 'object',
    required: ['source'],
    fields: {
      source: {
        type: 'object',
        // CEL: "exactly one of volumeSnapshotContentName and persistentVolumeClaimName must be set".
        exactlyOne: ['persistentVolumeClaimName', 'volumeSnapshotContentName'],
        fields: {
          persistentVolumeClaimName: { type: 'string' },
          volumeSnapshotContentName: { type: 'string' },
        },
      },
      // CEL: "volumeSnapshotClassName must not be the empty string when set".
      volumeSnapshotClassName: { type: 'string', nonEmpty: true },
    },
  },
};

const SCHEMAS: Record<string, { fields: Record<string, Field>; required: readonly string[]; namespaced: boolean }> = {
  'snapshot.storage.k8s.io/v1/VolumeSnapshotClass': { fields: VOLUME_SNAPSHOT_CLASS, required: ['deletionPolicy', 'driver'], namespaced: false },
  'snapshot.storage.k8s.io/v1/VolumeSnapshot': { fields: VOLUME_SNAPSHOT, required: ['spec'], namespaced: true },
};

/** The snapshot kinds this module knows, as "apiVersion/kind". */
export const SNAPSHOT_KINDS: readonly string[] = Object.keys(SCHEMAS);

/** The problems of one snapshot.storage.k8s.io object; empty when it is valid. */
export function snapshotObjectProblems(obj: Record<string, unknown>): string[] {
  const key = `${String(obj['apiVersion'])}/${String(obj['kind'])}`;
  const schema = SCHEMAS[key];
  if (!schema) return [`no schema for ${key}`];
  const problems: string[] = [];
  // metadata is the ordinary ObjectMeta: check it as that of a built-in object.
  const meta = { apiVersion: 'v1', kind: 'Namespace', metadata: obj['metadata'] };
  try {
    new Namespace(meta as ConstructorParameters<typeof Namespace>[0]).validate();
  } catch (err) {
    problems.push(`metadata: ${err instanceof Error ? err.message : String(err)}`);
  }
  problems.push(...unknownFields(meta, 'v1/Namespace'));
  const metadata = obj['metadata'];
  const namespace = isRecord(metadata) ? metadata['namespace'] : undefined;
  if (!schema.namespaced && namespace !== undefined) problems.push('metadata.namespace: the kind is cluster-scoped');
  const rest = Object.fromEntries(Object.entries(obj).filter(([k]) => !['apiVersion', 'kind', 'metadata'].includes(k)));
  checkObject(rest, { type: 'object', fields: schema.fields, required: schema.required }, '', problems);
  return problems;
}

function checkObject(value: unknown, spec: Extract<Field, { type: 'object' }>, at: string, problems: string[]): void {
  if (!isRecord(value)) {
    problems.push(`${at || '(object)'}: not an object`);
    return;
  }
  const where = (k: string) => (at === '' ? k : `${at}.${k}`);
  for (const r of spec.required ?? []) if (value[r] === undefined) problems.push(`${where(r)}: required`);
  if (spec.exactlyOne && spec.exactlyOne.filter((k) => value[k] !== undefined).length !== 1) {
    problems.push(`${at}: exactly one of ${spec.exactlyOne.join(', ')} must be set`);
  }
  for (const [k, v] of Object.entries(value)) {
    const f = spec.fields[k];
    if (!f) {
      problems.push(where(k));
      continue;
    }
    checkField(v, f, where(k), problems);
  }
}

function checkField(value: unknown, f: Field, at: string, problems: string[]): void {
  switch (f.type) {
    case 'string':
      if (typeof value !== 'string') problems.push(`${at}: not a string`);
      else if (f.enum && !f.enum.includes(value)) problems.push(`${at}: "${value}" is not one of ${f.enum.join(', ')}`);
      else if (f.nonEmpty && value === '') problems.push(`${at}: empty`);
      return;
    case 'stringMap':
      if (!isRecord(value)) problems.push(`${at}: not a map`);
      else for (const [k, v] of Object.entries(value)) if (typeof v !== 'string') problems.push(`${at}.${k}: not a string`);
      return;
    case 'object':
      checkObject(value, f, at, problems);
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
