// StorageClass: a provisioner, known reclaim policy and binding mode; provisioner, parameters, reclaimPolicy and volumeBindingMode frozen.
import { forbidden, invalid, notSupported, required, type FieldError } from './field-error.js';
import { isObject, jsonEqual, type Json } from './json.js';
import { checkQualifiedName } from './names.js';

const RECLAIM = ['Delete', 'Retain'] as const;
const BINDING = ['Immediate', 'WaitForFirstConsumer'] as const;

export function validateStorageClass(o: Json): FieldError[] {
  const errors: FieldError[] = [];
  if (typeof o.provisioner !== 'string' || o.provisioner === '') errors.push(required('provisioner'));
  else errors.push(...checkQualifiedName('provisioner', o.provisioner.toLowerCase()));
  if (o.parameters !== undefined && !isObject(o.parameters)) errors.push(invalid('parameters', o.parameters, 'must be a map of strings'));
  if (o.reclaimPolicy !== undefined && !(RECLAIM as readonly unknown[]).includes(o.reclaimPolicy)) errors.push(notSupported('reclaimPolicy', o.reclaimPolicy, RECLAIM));
  if (o.volumeBindingMode !== undefined && !(BINDING as readonly unknown[]).includes(o.volumeBindingMode)) errors.push(notSupported('volumeBindingMode', o.volumeBindingMode, BINDING));
  if (o.allowVolumeExpansion !== undefined && typeof o.allowVolumeExpansion !== 'boolean') errors.push(invalid('allowVolumeExpansion', o.allowVolumeExpansion, 'must be true or false'));
  if (o.mountOptions !== undefined && !(Array.isArray(o.mountOptions) && o.mountOptions.every((m) => typeof m === 'string'))) errors.push(invalid('mountOptions', o.mountOptions, 'must be a list of strings'));
  return errors;
}

export function validateStorageClassUpdate(o: Json, old: Json): FieldError[] {
  const errors: FieldError[] = [];
  if (!jsonEqual(o.parameters ?? {}, old.parameters ?? {})) errors.push(forbidden('parameters', 'updates to parameters are forbidden.'));
  if (o.provisioner !== old.provisioner) errors.push(forbidden('provisioner', 'updates to provisioner are forbidden.'));
  if (o.reclaimPolicy !== old.reclaimPolicy) errors.push(forbidden('reclaimPolicy', 'updates to reclaimPolicy are forbidden.'));
  if (o.volumeBindingMode !== old.volumeBindingMode) errors.push(invalid('volumeBindingMode', o.volumeBindingMode, 'field is immutable'));
  return errors;
}
