// Where API writes meet admission: defaulting and validation before the store sees an object (a stand-in until src/bench/admission lands).

/** One field problem, as apimachinery's field.Error reports it. */
export interface FieldError {
  field: string;
  type: string;
  message: string;
  value?: unknown;
}

export interface AdmissionResult {
  object: Record<string, unknown>;
  errors: FieldError[];
}

/**
 * Admits an object of `kind` (with `old` for an update): the defaulted object and the
 * errors that refuse it. Stand-in: accepts everything unchanged; the admission module
 * replaces this body.
 */
export function admit(kind: string, object: Record<string, unknown>, old?: Record<string, unknown>): AdmissionResult {
  void kind;
  void old;
  return { object, errors: [] };
}
