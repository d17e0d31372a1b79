// Reads Kubernetes YAML (files or directories) into typed objects, with errors that name the file, object and field.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { API_VERSIONS, KINDS, isKind, type AnyObject, type Kind } from '../api/kinds.js';
import { isQuantity } from '../api/quantity.js';
import { resourceForKind } from '../api/resources.js';
import { ANN_BENCH_EXPECT_DATA, ANN_BENCH_WRITE_DATA, ANN_LODE_POOLS } from '../api/annotations.js';
import { parseExpectations, parseWrites } from '../controllers/volume-data.js';
import { parsePoolsAnnotation } from './node-pools.js';
import { unmodelledPaths } from './modelled-fields.js';

/** One object read from a manifest, with where it came from. */
export interface LoadedObject {
  kind: Kind;
  object: AnyObject;
  file: string;
}

export class ManifestError extends Error {}

/** The .yaml/.yml files of a path (a directory is read in name order, not recursively). */
export function manifestFiles(path: string): string[] {
  if (statSync(path).isDirectory()) {
    return readdirSync(path).filter((f) => /\.ya?ml$/.test(f)).sort().map((f) => join(path, f));
  }
  return [path];
}

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function at(obj: unknown, path: string): unknown {
  let cur: unknown = obj;
  for (const part of path.split('.')) {
    if (!isObject(cur)) return undefined;
    cur = cur[part];
  }
  return cur;
}

/** Checks one object; returns "field: problem" strings. */
function validate(kind: Kind, o: Json): string[] {
  const problems: string[] = [];
  const quantity = (path: string, required = false): void => {
    const v = at(o, path);
    if (v === undefined) {
      if (required) problems.push(`${path}: required`);
    } else if (!isQuantity(v)) {
      problems.push(`${path}: not a quantity: ${JSON.stringify(v)}`);
    }
  };
  const quantities = (path: string): void => {
    const m = at(o, path);
    if (m === undefined) return;
    if (!isObject(m)) { problems.push(`${path}: must be a map`); return; }
    for (const k of Object.keys(m)) quantity(`${path}.${k}`);
  };
  const list = (path: string): unknown[] => {
    const v = at(o, path);
    if (v === undefined) return [];
    if (!Array.isArray(v)) { problems.push(`${path}: must be a list`); return []; }
    return v;
  };
  const podSpec = (prefix: string): void => {
    const containers = list(`${prefix}.containers`);
    if (containers.length === 0) problems.push(`${prefix}.containers: at least one container is required`);
    for (const [field, cs] of [['containers', containers], ['initContainers', list(`${prefix}.initContainers`)]] as const) {
      cs.forEach((c, i) => {
        if (!isObject(c)) { problems.push(`${prefix}.${field}[${i}]: must be an object`); return; }
        for (const part of ['requests', 'limits']) {
          const m = at(c, `resources.${part}`);
          if (isObject(m)) for (const [k, v] of Object.entries(m)) if (!isQuantity(v)) problems.push(`${prefix}.${field}[${i}].resources.${part}.${k}: not a quantity: ${JSON.stringify(v)}`);
        }
      });
    }
    list(`${prefix}.volumes`).forEach((v, i) => {
      if (!isObject(v) || typeof v.name !== 'string') { problems.push(`${prefix}.volumes[${i}].name: required`); return; }
      if (isObject(v.persistentVolumeClaim) && typeof v.persistentVolumeClaim.claimName !== 'string') problems.push(`${prefix}.volumes[${i}].persistentVolumeClaim.claimName: required`);
      if (isObject(v.ephemeral)) {
        const req = at(v, 'ephemeral.volumeClaimTemplate.spec.resources.requests.storage');
        if (!isObject(at(v, 'ephemeral.volumeClaimTemplate.spec'))) problems.push(`${prefix}.volumes[${i}].ephemeral.volumeClaimTemplate.spec: required`);
        else if (req !== undefined && !isQuantity(req)) problems.push(`${prefix}.volumes[${i}].ephemeral.volumeClaimTemplate.spec.resources.requests.storage: not a quantity: ${JSON.stringify(req)}`);
      }
      if (isObject(v.csi)) {
        if (typeof v.csi.driver !== 'string') problems.push(`${prefix}.volumes[${i}].csi.driver: required`);
        const size = at(v, 'csi.volumeAttributes.size');
        if (size !== undefined && !isQuantity(size)) problems.push(`${prefix}.volumes[${i}].csi.volumeAttributes.size: not a quantity: ${JSON.stringify(size)}`);
      }
    });
  };
  const dataAnnotations = (prefix: string): void => {
    const ann = at(o, `${prefix}.annotations`);
    if (!isObject(ann)) return;
    try {
      if (ann[ANN_BENCH_WRITE_DATA] !== undefined) parseWrites(String(ann[ANN_BENCH_WRITE_DATA]));
      if (ann[ANN_BENCH_EXPECT_DATA] !== undefined) parseExpectations(String(ann[ANN_BENCH_EXPECT_DATA]), 'default');
    } catch (err) {
      problems.push(`${prefix}.annotations: ${(err as Error).message}`);
    }
  };
  switch (kind) {
    case 'Node': {
      quantities('status.allocatable');
      quantities('status.capacity');
      const pools = at(o, `metadata.annotations`);
      const ann = isObject(pools) ? pools[ANN_LODE_POOLS] : undefined;
      if (ann !== undefined) {
        try {
          parsePoolsAnnotation(String(ann));
        } catch (err) {
          problems.push(`metadata.annotations["${ANN_LODE_POOLS}"]: ${(err as Error).message}`);
        }
      }
      break;
    }
    case 'StorageClass':
      if (typeof o.provisioner !== 'string') problems.push('provisioner: required');
      if (o.volumeBindingMode !== undefined && o.volumeBindingMode !== 'Immediate' && o.volumeBindingMode !== 'WaitForFirstConsumer') problems.push(`volumeBindingMode: must be Immediate or WaitForFirstConsumer, not ${JSON.stringify(o.volumeBindingMode)}`);
      if (o.reclaimPolicy !== undefined && o.reclaimPolicy !== 'Delete' && o.reclaimPolicy !== 'Retain') problems.push(`reclaimPolicy: must be Delete or Retain, not ${JSON.stringify(o.reclaimPolicy)}`);
      break;
    case 'CSIDriver':
      if (at(o, 'spec.storageCapacity') !== undefined && typeof at(o, 'spec.storageCapacity') !== 'boolean') problems.push('spec.storageCapacity: must be true or false');
      break;
    case 'PersistentVolume':
      quantity('spec.capacity.storage', true);
      if (list('spec.accessModes').length === 0) problems.push('spec.accessModes: required');
      break;
    case 'PersistentVolumeClaim':
      quantity('spec.resources.requests.storage');
      if (list('spec.accessModes').length === 0) problems.push('spec.accessModes: required');
      for (const f of ['spec.dataSource', 'spec.dataSourceRef']) {
        const ds = at(o, f);
        if (ds === undefined) continue;
        if (!isObject(ds) || typeof ds.kind !== 'string' || typeof ds.name !== 'string') problems.push(`${f}: kind and name are required`);
      }
      break;
    case 'VolumeSnapshotClass':
      if (typeof o.driver !== 'string') problems.push('driver: required');
      if (o.deletionPolicy !== 'Delete' && o.deletionPolicy !== 'Retain') problems.push(`deletionPolicy: must be Delete or Retain, not ${JSON.stringify(o.deletionPolicy)}`);
      break;
    case 'VolumeSnapshot': {
      // The CRD's validation: exactly one source.
      const pvc = at(o, 'spec.source.persistentVolumeClaimName');
      const content = at(o, 'spec.source.volumeSnapshotContentName');
      if ((pvc === undefined) === (content === undefined)) problems.push('spec.source: exactly one of persistentVolumeClaimName and volumeSnapshotContentName is required');
      break;
    }
    case 'VolumeSnapshotContent': {
      if (typeof at(o, 'spec.driver') !== 'string') problems.push('spec.driver: required');
      const policy = at(o, 'spec.deletionPolicy');
      if (policy !== 'Delete' && policy !== 'Retain') problems.push(`spec.deletionPolicy: must be Delete or Retain, not ${JSON.stringify(policy)}`);
      if (typeof at(o, 'spec.volumeSnapshotRef.name') !== 'string' || typeof at(o, 'spec.volumeSnapshotRef.namespace') !== 'string') problems.push('spec.volumeSnapshotRef: name and namespace are required');
      if ((at(o, 'spec.source.volumeHandle') === undefined) === (at(o, 'spec.source.snapshotHandle') === undefined)) problems.push('spec.source: exactly one of volumeHandle and snapshotHandle is required');
      break;
    }
    case 'Pod':
      podSpec('spec');
      dataAnnotations('metadata');
      break;
    case 'StatefulSet':
      podSpec('spec.template.spec');
      dataAnnotations('spec.template.metadata');
      if (at(o, 'spec.replicas') !== undefined && (typeof at(o, 'spec.replicas') !== 'number' || (at(o, 'spec.replicas') as number) < 0)) problems.push('spec.replicas: must be a number >= 0');
      list('spec.volumeClaimTemplates').forEach((t, i) => {
        if (!isObject(t) || typeof at(t, 'metadata.name') !== 'string') problems.push(`spec.volumeClaimTemplates[${i}].metadata.name: required`);
        const req = at(t, 'spec.resources.requests.storage');
        if (req !== undefined && !isQuantity(req)) problems.push(`spec.volumeClaimTemplates[${i}].spec.resources.requests.storage: not a quantity: ${JSON.stringify(req)}`);
      });
      break;
    case 'CSIStorageCapacity':
      if (typeof o.storageClassName !== 'string') problems.push('storageClassName: required');
      quantity('capacity');
      quantity('maximumVolumeSize');
      break;
  }
  return problems;
}

/** Unmodelled fields seen so far across loads: each is reported once per run. */
export class UnmodelledFields {
  private readonly seen = new Map<string, string>();

  add(kind: Kind, paths: string[], where: string): void {
    for (const p of paths) {
      const key = `${kind}.${p}`;
      if (!this.seen.has(key)) this.seen.set(key, where);
    }
  }

  /** "Kind.path (first seen in file: Kind/name)" lines. */
  list(): string[] {
    return [...this.seen].map(([k, w]) => `${k} (first in ${w})`);
  }

  get size(): number {
    return this.seen.size;
  }
}

/** Parses YAML text holding one or more documents (a `kind: List` is unpacked). */
export function parseManifests(text: string, file: string, unmodelled?: UnmodelledFields): LoadedObject[] {
  const out: LoadedObject[] = [];
  const docs = parseAllDocuments(text);
  docs.forEach((doc, index) => {
    if (doc.errors.length > 0) throw new ManifestError(`${file}: document ${index + 1}: YAML error: ${doc.errors[0]!.message}`);
    const value: unknown = doc.toJS();
    if (value === null || value === undefined) return;
    const items = isObject(value) && value.kind === 'List' && Array.isArray(value.items) ? value.items : [value];
    for (const item of items) out.push(checkObject(item, `${file}: document ${index + 1}`, file, unmodelled));
  });
  return out;
}

function checkObject(item: unknown, where: string, file: string, unmodelled: UnmodelledFields | undefined): LoadedObject {
  if (!isObject(item)) throw new ManifestError(`${where}: not an object`);
  const kind = item.kind;
  const name = at(item, 'metadata.name') ?? (at(item, 'metadata.generateName') !== undefined ? `${String(at(item, 'metadata.generateName'))}*` : undefined);
  const label = `${file}: ${String(kind ?? '?')} "${String(name ?? '?')}"`;
  if (typeof kind !== 'string') throw new ManifestError(`${where}: kind: required`);
  if (!isKind(kind)) throw new ManifestError(`${label}: kind: ${kind} is not one the bench handles (${KINDS.join(', ')})`);
  if (item.apiVersion !== API_VERSIONS[kind] && !(resourceForKind(kind)?.alsoAccepted ?? []).includes(String(item.apiVersion))) {
    throw new ManifestError(`${label}: apiVersion: ${kind} is served as ${API_VERSIONS[kind]}, not ${JSON.stringify(item.apiVersion)}`);
  }
  if (typeof name !== 'string' || name === '') throw new ManifestError(`${label}: metadata.name: required`);
  const problems = validate(kind, item);
  if (problems.length > 0) throw new ManifestError(`${label}: ${problems.join('; ')}`);
  unmodelled?.add(kind, unmodelledPaths(kind, item), `${file}: ${kind}/${name}`);
  return { kind, object: item as unknown as AnyObject, file };
}

/** Loads every object of the given files or directories, in order. */
export function loadManifests(paths: string[], unmodelled?: UnmodelledFields): LoadedObject[] {
  const out: LoadedObject[] = [];
  for (const p of paths) {
    for (const f of manifestFiles(p)) {
      let text: string;
      try {
        text = readFileSync(f, 'utf8');
      } catch (err) {
        throw new ManifestError(`${f}: cannot read: ${(err as Error).message}`);
      }
      out.push(...parseManifests(text, f, unmodelled));
    }
  }
  return out;
}

/** Checks inline objects (from a scenario step) the same way. */
export function checkInlineObjects(items: unknown[], where: string, unmodelled?: UnmodelledFields): LoadedObject[] {
  return items.map((item, i) => checkObject(item, `${where}: object ${i + 1}`, where, unmodelled));
}
