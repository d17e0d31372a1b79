// One field error as the API server's validation reports it (apimachinery's field.Error), and the constructors for each type.

export type FieldErrorType = 'FieldValueRequired' | 'FieldValueInvalid' | 'FieldValueNotSupported' | 'FieldValueForbidden' | 'FieldValueDuplicate' | 'FieldValueTooLong';

/**
 * `message` is the error body without the field ("Invalid value: \"0\": must be greater
 * than zero"), which is what a 422 Status carries in `details.causes[].message`.
 */
export interface FieldError {
  field: string;
  type: FieldErrorType;
  message: string;
  value?: unknown;
}

/** A value as the API server prints it in an error: strings quoted, numbers and booleans bare, the rest as JSON. */
export function showValue(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (v === undefined || v === null) return 'null';
  return JSON.stringify(v);
}

const withDetail = (head: string, detail: string | undefined): string => (detail ? `${head}: ${detail}` : head);

export function required(field: string, detail?: string): FieldError {
  return { field, type: 'FieldValueRequired', message: withDetail('Required value', detail) };
}

export function invalid(field: string, value: unknown, detail: string): FieldError {
  return { field, type: 'FieldValueInvalid', message: withDetail(`Invalid value: ${showValue(value)}`, detail), value };
}

export function notSupported(field: string, value: unknown, supported: readonly string[]): FieldError {
  return { field, type: 'FieldValueNotSupported', message: `Unsupported value: ${showValue(value)}: supported values: ${supported.map((s) => JSON.stringify(s)).join(', ')}`, value };
}

export function forbidden(field: string, detail: string): FieldError {
  return { field, type: 'FieldValueForbidden', message: withDetail('Forbidden', detail) };
}

export function duplicate(field: string, value: unknown): FieldError {
  return { field, type: 'FieldValueDuplicate', message: `Duplicate value: ${showValue(value)}`, value };
}

export function tooLong(field: string, value: unknown, max: number): FieldError {
  return { field, type: 'FieldValueTooLong', message: `Too long: may not be more than ${max} bytes`, value };
}

/** "field: body", the form each error takes inside the aggregate message. */
export function errorText(e: FieldError): string {
  return `${e.field}: ${e.message}`;
}
