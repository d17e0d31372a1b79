// PersistentVolumeClaim: spec rules on create; on update the spec is frozen except a bound claim's storage request and an unset volumeName.
import { forbidden, type FieldError } from './field-error.js';
import { at, isObject, jsonEqual, type Json } from './json.js';
import { validateClaimSpec } from './claim-spec.js';
import { parseQuantity, isQuantity } from '../../util/quantity.js';

export function validateClaim(o: Json): FieldError[] {
  return validateClaimSpec(o.spec, 'spec');
}

function storageOf(spec: unknown, path = 'resources.requests.storage'): number | undefined {
  const v = at(spec, path);
  return isQuantity(v) ? parseQuantity(v as string) : undefined;
}

export function validateClaimUpdate(o: Json, old: Json): FieldError[] {
  const errors: FieldError[] = [];
  const next = structuredClone(isObject(o.spec) ? o.spec : {});
  const prev = isObject(old.spec) ? old.spec : {};
  // volumeName may be set once (binding); volumeAttributesClassName is not modelled and compared as is.
  if (prev.volumeName === undefined || prev.volumeName === '') next.volumeName = prev.volumeName;
  const bound = at(old, 'status.phase') === 'Bound';
  const nextStorage = storageOf(next);
  const prevStorage = storageOf(prev);
  if (bound && isObject(next.resources) && isObject(next.resources.requests) && isObject(at(prev, 'resources.requests'))) {
    next.resources.requests.storage = (at(prev, 'resources.requests') as Json).storage;
  }
  // Equal quantities written differently ("1Gi" and "1024Mi") are the same request.
  if (nextStorage !== undefined && nextStorage === prevStorage && isObject(next.resources) && isObject(next.resources.requests)) {
    next.resources.requests.storage = (at(prev, 'resources.requests') as Json).storage;
  }
  if (!jsonEqual(next, prev)) errors.push(forbidden('spec', 'spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims'));
  if (bound && nextStorage !== undefined && prevStorage !== undefined && nextStorage < prevStorage) {
    // RecoverVolumeExpansionFailure (on by default): a request may go back down, but not to or below what the volume has.
    const status = storageOf(old.status, 'capacity.storage');
    if (status === undefined) errors.push(forbidden('spec.resources.requests.storage', 'field can not be less than previous value'));
    else if (nextStorage <= status) errors.push(forbidden('spec.resources.requests.storage', 'field can not be less than status.capacity'));
  }
  return errors;
}
