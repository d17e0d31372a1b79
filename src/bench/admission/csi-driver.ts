// CSIDriver: known lifecycle modes and fsGroupPolicy, booleans where booleans go; attachRequired and volumeLifecycleModes frozen.
import { invalid, notSupported, required, type FieldError } from './field-error.js';
import { isObject, jsonEqual, list, type Json } from './json.js';

const MODES = ['Ephemeral', 'Persistent'] as const;
const FS_GROUP = ['File', 'None', 'ReadWriteOnceWithFSType'] as const;

export function validateCsiDriver(o: Json): FieldError[] {
  const errors: FieldError[] = [];
  const spec = o.spec;
  if (spec === undefined) return errors;
  if (!isObject(spec)) return [required('spec')];
  for (const f of ['attachRequired', 'podInfoOnMount', 'storageCapacity', 'requiresRepublish', 'seLinuxMount']) {
    if (spec[f] !== undefined && typeof spec[f] !== 'boolean') errors.push(invalid(`spec.${f}`, spec[f], 'must be true or false'));
  }
  list(spec.volumeLifecycleModes).forEach((m, i) => {
    if (!(MODES as readonly unknown[]).includes(m)) errors.push(notSupported(`spec.volumeLifecycleModes[${i}]`, m, MODES));
  });
  if (spec.fsGroupPolicy !== undefined && !(FS_GROUP as readonly unknown[]).includes(spec.fsGroupPolicy)) errors.push(notSupported('spec.fsGroupPolicy', spec.fsGroupPolicy, FS_GROUP));
  return errors;
}

export function validateCsiDriverUpdate(o: Json, old: Json): FieldError[] {
  const errors: FieldError[] = [];
  const next = isObject(o.spec) ? o.spec : {};
  const prev = isObject(old.spec) ? old.spec : {};
  // Upstream names the path "attachedRequired".
  if (!jsonEqual(next.attachRequired, prev.attachRequired)) errors.push(invalid('spec.attachedRequired', next.attachRequired, 'field is immutable'));
  if (!jsonEqual(next.volumeLifecycleModes, prev.volumeLifecycleModes)) errors.push(invalid('spec.volumeLifecycleModes', next.volumeLifecycleModes, 'field is immutable'));
  return errors;
}
