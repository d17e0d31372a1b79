// Where API writes meet admission: defaulting and validation before the store sees an object.
import { admit as admitObject, type AdmissionResult } from '../admission/admit.js';

export type { AdmissionResult } from '../admission/admit.js';
export type { FieldError } from '../admission/field-error.js';

/** Admits an object of `kind` (with `old` for an update): the defaulted object and the errors that refuse it. */
export function admit(kind: string, object: Record<string, unknown>, old?: Record<string, unknown>): AdmissionResult {
  return admitObject(kind, object, old);
}
