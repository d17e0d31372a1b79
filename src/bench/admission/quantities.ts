// Quantity rules: well-formed (the API server's decoder refuses anything else), non-negative, positive.
import { isQuantity, parseQuantity } from '../../util/quantity.js';
import { invalid, type FieldError } from './field-error.js';

const FORMAT = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

/** Parsed value, or an error for a malformed one. */
export function quantityValue(field: string, v: unknown, errors: FieldError[]): number | undefined {
  if (!isQuantity(v)) {
    errors.push(invalid(field, v, FORMAT));
    return undefined;
  }
  return parseQuantity(v as string | number);
}

export function checkNonNegative(field: string, v: unknown, errors: FieldError[]): number | undefined {
  const n = quantityValue(field, v, errors);
  if (n !== undefined && n < 0) errors.push(invalid(field, v, 'must be greater than or equal to 0'));
  return n;
}

export function checkPositive(field: string, v: unknown, errors: FieldError[]): number | undefined {
  const n = quantityValue(field, v, errors);
  if (n !== undefined && n <= 0) errors.push(invalid(field, v, 'must be greater than zero'));
  return n;
}
