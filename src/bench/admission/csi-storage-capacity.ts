// CSIStorageCapacity: a storage class name and non-negative capacity figures.
import { required, type FieldError } from './field-error.js';
import { type Json } from './json.js';
import { checkSubdomain } from './names.js';
import { checkNonNegative } from './quantities.js';

export function validateStorageCapacity(o: Json): FieldError[] {
  const errors: FieldError[] = [];
  if (typeof o.storageClassName !== 'string' || o.storageClassName === '') errors.push(required('storageClassName'));
  else errors.push(...checkSubdomain('storageClassName', o.storageClassName));
  if (o.capacity !== undefined) checkNonNegative('capacity', o.capacity, errors);
  if (o.maximumVolumeSize !== undefined) checkNonNegative('maximumVolumeSize', o.maximumVolumeSize, errors);
  return errors;
}
