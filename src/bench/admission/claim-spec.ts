// PersistentVolumeClaimSpec rules, shared by claims, generic ephemeral volume templates and StatefulSet claim templates.
import { forbidden, invalid, notSupported, required, type FieldError } from './field-error.js';
import { isObject, list, type Json } from './json.js';
import { checkSubdomain } from './names.js';
import { checkPositive, quantityValue } from './quantities.js';

export const ACCESS_MODES = ['ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOnce', 'ReadWriteOncePod'] as const;
export const VOLUME_MODES = ['Block', 'Filesystem'] as const;

/** Access modes: at least one, known values, ReadWriteOncePod alone. */
export function checkAccessModes(field: string, v: unknown, errors: FieldError[]): void {
  const modes = list(v);
  if (modes.length === 0) {
    errors.push(required(field, 'at least 1 access mode is required'));
    return;
  }
  let rwop = false;
  let other = false;
  for (const m of modes) {
    if (!(ACCESS_MODES as readonly unknown[]).includes(m)) errors.push(notSupported(field, m, ACCESS_MODES));
    else if (m === 'ReadWriteOncePod') rwop = true;
    else other = true;
  }
  if (rwop && other) errors.push(forbidden(field, 'may not use ReadWriteOncePod with other access modes'));
}

export function checkVolumeMode(field: string, v: unknown, errors: FieldError[]): void {
  if (v !== undefined && !(VOLUME_MODES as readonly unknown[]).includes(v)) errors.push(notSupported(field, v, VOLUME_MODES));
}

function checkDataSource(field: string, ds: unknown, errors: FieldError[]): void {
  if (ds === undefined) return;
  if (!isObject(ds)) {
    errors.push(invalid(field, ds, 'must be an object'));
    return;
  }
  if (typeof ds.name !== 'string' || ds.name === '') errors.push(required(`${field}.name`));
  if (typeof ds.kind !== 'string' || ds.kind === '') errors.push(required(`${field}.kind`));
  else if ((ds.apiGroup === undefined || ds.apiGroup === '') && ds.kind !== 'PersistentVolumeClaim') {
    errors.push(notSupported(`${field}.kind`, ds.kind, ['PersistentVolumeClaim']));
  }
}

/**
 * `strictStorage`: a claim needs a positive storage request. A template is checked as the
 * decoder checks it (well-formed quantities) but not further: the API server does not
 * validate StatefulSet claim templates; a bad one fails when its claim is created.
 */
export function validateClaimSpec(spec: unknown, field: string, strictStorage = true): FieldError[] {
  const errors: FieldError[] = [];
  if (!isObject(spec)) return [required(field)];
  const s: Json = spec;
  if (strictStorage) checkAccessModes(`${field}.accessModes`, s.accessModes, errors);
  const requests = isObject(s.resources) ? s.resources.requests : undefined;
  const storage = isObject(requests) ? requests.storage : undefined;
  if (strictStorage) {
    if (storage === undefined) errors.push(required(`${field}.resources[storage]`));
    else checkPositive(`${field}.resources[storage]`, storage, errors);
  } else if (storage !== undefined) {
    quantityValue(`${field}.resources[storage]`, storage, errors);
  }
  for (const part of ['requests', 'limits']) {
    const m = isObject(s.resources) ? s.resources[part] : undefined;
    if (isObject(m)) for (const [k, v] of Object.entries(m)) if (k !== 'storage' || part !== 'requests') quantityValue(`${field}.resources.${part}[${k}]`, v, errors);
  }
  if (typeof s.storageClassName === 'string' && s.storageClassName !== '') errors.push(...checkSubdomain(`${field}.storageClassName`, s.storageClassName));
  checkVolumeMode(`${field}.volumeMode`, s.volumeMode, errors);
  checkDataSource(`${field}.dataSource`, s.dataSource, errors);
  checkDataSource(`${field}.dataSourceRef`, s.dataSourceRef, errors);
  if (isObject(s.dataSource) && isObject(s.dataSourceRef) && (s.dataSource.kind !== s.dataSourceRef.kind || s.dataSource.name !== s.dataSourceRef.name || (s.dataSource.apiGroup ?? '') !== (s.dataSourceRef.apiGroup ?? '')) && s.dataSourceRef.namespace === undefined) {
    errors.push(invalid(`${field}.dataSource`, s.dataSource, 'must match dataSourceRef'));
  }
  return errors;
}
