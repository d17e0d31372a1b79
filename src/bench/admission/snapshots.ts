// The snapshot CRDs' schema rules (the bench has no webhook): a class's driver and policy, exactly one snapshot source, a content's reference.
import { invalid, notSupported, required, type FieldError } from './field-error.js';
import { at, jsonEqual, type Json } from './json.js';

const POLICIES = ['Delete', 'Retain'] as const;

function policy(field: string, v: unknown, errors: FieldError[]): void {
  if (v === undefined) errors.push(required(field));
  else if (!(POLICIES as readonly unknown[]).includes(v)) errors.push(notSupported(field, v, POLICIES));
}

export function validateSnapshotClass(o: Json): FieldError[] {
  const errors: FieldError[] = [];
  if (typeof o.driver !== 'string' || o.driver === '') errors.push(required('driver'));
  policy('deletionPolicy', o.deletionPolicy, errors);
  return errors;
}

export function validateSnapshot(o: Json): FieldError[] {
  const pvc = at(o, 'spec.source.persistentVolumeClaimName');
  const content = at(o, 'spec.source.volumeSnapshotContentName');
  if ((pvc === undefined) === (content === undefined)) return [invalid('spec.source', at(o, 'spec.source') ?? null, 'exactly one of persistentVolumeClaimName and volumeSnapshotContentName should be set')];
  return [];
}

export function validateSnapshotUpdate(o: Json, old: Json): FieldError[] {
  const errors: FieldError[] = [];
  for (const f of ['persistentVolumeClaimName', 'volumeSnapshotContentName']) {
    if (!jsonEqual(at(o, `spec.source.${f}`), at(old, `spec.source.${f}`))) errors.push(invalid(`spec.source.${f}`, at(o, `spec.source.${f}`), `${f} is immutable`));
  }
  return errors;
}

export function validateSnapshotContent(o: Json): FieldError[] {
  const errors: FieldError[] = [];
  if (typeof at(o, 'spec.driver') !== 'string') errors.push(required('spec.driver'));
  policy('spec.deletionPolicy', at(o, 'spec.deletionPolicy'), errors);
  if (typeof at(o, 'spec.volumeSnapshotRef.name') !== 'string') errors.push(required('spec.volumeSnapshotRef.name'));
  if (typeof at(o, 'spec.volumeSnapshotRef.namespace') !== 'string') errors.push(required('spec.volumeSnapshotRef.namespace'));
  if ((at(o, 'spec.source.volumeHandle') === undefined) === (at(o, 'spec.source.snapshotHandle') === undefined)) {
    errors.push(invalid('spec.source', at(o, 'spec.source') ?? null, 'exactly one of volumeHandle and snapshotHandle should be set'));
  }
  return errors;
}

export function validateSnapshotContentUpdate(o: Json, old: Json): FieldError[] {
  const errors: FieldError[] = [];
  for (const f of ['volumeHandle', 'snapshotHandle']) {
    if (at(old, `spec.source.${f}`) !== undefined && !jsonEqual(at(o, `spec.source.${f}`), at(old, `spec.source.${f}`))) errors.push(invalid(`spec.source.${f}`, at(o, `spec.source.${f}`), `${f} is immutable`));
  }
  return errors;
}
