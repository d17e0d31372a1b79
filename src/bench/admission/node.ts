// Node: capacity and allocatable are non-negative quantities; taints have a key and a known effect.
import { notSupported, required, type FieldError } from './field-error.js';
import { at, isObject, list, type Json } from './json.js';
import { checkNonNegative } from './quantities.js';

const EFFECTS = ['NoExecute', 'NoSchedule', 'PreferNoSchedule'] as const;

export function validateNode(o: Json): FieldError[] {
  const errors: FieldError[] = [];
  for (const part of ['capacity', 'allocatable']) {
    const m = at(o, `status.${part}`);
    if (isObject(m)) for (const [k, v] of Object.entries(m)) checkNonNegative(`status.${part}[${k}]`, v, errors);
  }
  list(at(o, 'spec.taints')).forEach((t, i) => {
    if (!isObject(t) || typeof t.key !== 'string' || t.key === '') errors.push(required(`spec.taints[${i}].key`));
    if (!isObject(t) || !(EFFECTS as readonly unknown[]).includes(t.effect)) errors.push(isObject(t) && t.effect !== undefined ? notSupported(`spec.taints[${i}].effect`, t.effect, EFFECTS) : required(`spec.taints[${i}].effect`));
  });
  return errors;
}
