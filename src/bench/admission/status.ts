// How a refused write reads: the 422 Status body with its causes, and the message text kube-apiserver writes.
import { errorText, type FieldError } from './field-error.js';

export interface StatusCause {
  reason: string;
  message: string;
  field: string;
}

export interface InvalidStatus {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure';
  message: string;
  reason: 'Invalid';
  details: { name: string; group?: string; kind: string; causes: StatusCause[] };
  code: 422;
}

function groupOf(apiVersion: string): string {
  const i = apiVersion.indexOf('/');
  return i < 0 ? '' : apiVersion.slice(0, i);
}

/** `PersistentVolumeClaim "data" is invalid: spec.resources[storage]: ...`; several errors are listed in brackets. */
export function invalidMessage(kind: string, apiVersion: string, name: string, errors: FieldError[]): string {
  const group = groupOf(apiVersion);
  const qualified = group === '' ? kind : `${kind}.${group}`;
  const texts = [...new Set(errors.map(errorText))];
  return `${qualified} ${JSON.stringify(name)} is invalid: ${texts.length === 1 ? texts[0] : `[${texts.join(', ')}]`}`;
}

export function invalidStatus(kind: string, apiVersion: string, name: string, errors: FieldError[]): InvalidStatus {
  const group = groupOf(apiVersion);
  return {
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
    message: invalidMessage(kind, apiVersion, name, errors),
    reason: 'Invalid',
    details: { name, ...(group === '' ? {} : { group }), kind, causes: errors.map((e) => ({ reason: e.type, message: e.message, field: e.field })) },
    code: 422,
  };
}
