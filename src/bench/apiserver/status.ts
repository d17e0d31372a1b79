// metav1.Status error bodies: every failure the API answers, with the code, reason and details clients branch on.
import type { ResourceType } from '../api/resources.js';

export type StatusReason =
  | 'NotFound' | 'AlreadyExists' | 'Conflict' | 'Invalid' | 'BadRequest' | 'MethodNotAllowed'
  | 'UnsupportedMediaType' | 'Expired' | 'Gone' | 'Forbidden' | 'NotAcceptable' | 'InternalError' | 'ServiceUnavailable';

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  /** The plural resource for most errors, as upstream fills it; the Kind for Invalid. */
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
}

export interface StatusBody {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure' | 'Success';
  message?: string;
  reason?: StatusReason;
  details?: StatusDetails;
  code: number;
}

/** A request failed: thrown anywhere below the router, turned into a Status body there. */
export class StatusError extends Error {
  constructor(readonly code: number, readonly reason: StatusReason, message: string, readonly details?: StatusDetails) {
    super(message);
  }

  body(): StatusBody {
    return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: this.message, reason: this.reason, ...(this.details ? { details: this.details } : {}), code: this.code };
  }
}

/** `pods "x"`, or `storageclasses.storage.k8s.io "x"` outside the core group, as upstream names a resource in messages. */
export function qualified(r: ResourceType): string {
  return r.group === '' ? r.plural : `${r.plural}.${r.group}`;
}

function details(r: ResourceType, name: string): StatusDetails {
  return { name, group: r.group, kind: r.plural };
}

export function notFound(r: ResourceType, name: string): StatusError {
  return new StatusError(404, 'NotFound', `${qualified(r)} "${name}" not found`, details(r, name));
}

export function alreadyExists(r: ResourceType, name: string): StatusError {
  return new StatusError(409, 'AlreadyExists', `${qualified(r)} "${name}" already exists`, details(r, name));
}

export function conflict(r: ResourceType, name: string, why = 'the object has been modified; please apply your changes to the latest version and try again'): StatusError {
  return new StatusError(409, 'Conflict', `Operation cannot be fulfilled on ${qualified(r)} "${name}": ${why}`, details(r, name));
}

export function badRequest(message: string): StatusError {
  return new StatusError(400, 'BadRequest', message);
}

export function methodNotAllowed(message = 'the server does not allow this method on the requested resource'): StatusError {
  return new StatusError(405, 'MethodNotAllowed', message);
}

export function unsupportedMediaType(message: string): StatusError {
  return new StatusError(415, 'UnsupportedMediaType', message);
}

/** A resourceVersion older than the history the server keeps (watch, or a list's continue token). */
export function expired(message: string): StatusError {
  return new StatusError(410, 'Expired', message);
}

export function notAcceptable(message: string): StatusError {
  return new StatusError(406, 'NotAcceptable', message);
}

/** One field problem, as admission reports it (FieldError) and a 422's causes carry it. */
export interface FieldCause {
  field: string;
  /** e.g. "FieldValueRequired", or the short form "Required" (made into the long one). */
  type: string;
  message: string;
  value?: unknown;
}

/** 422 Invalid: `Pod "x" is invalid: spec.a: Required value`, with one cause per field. */
export function invalid(r: ResourceType, name: string, errors: FieldCause[]): StatusError {
  const causes = errors.map((e) => ({ reason: e.type.startsWith('FieldValue') ? e.type : `FieldValue${e.type}`, message: e.message, field: e.field }));
  const parts = errors.map((e) => `${e.field}: ${e.message}`);
  const list = parts.length === 1 ? parts[0] : `[${parts.join(', ')}]`;
  return new StatusError(422, 'Invalid', `${r.kind} "${name}" is invalid: ${list}`, { name, group: r.group, kind: r.kind, causes });
}

/** A successful delete that has no object to return (most kinds), as the generic registry answers. */
export function deletedStatus(r: ResourceType, name: string, uid: string | undefined): Omit<StatusBody, 'code'> & { code?: number } {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name, group: r.group, kind: r.plural, ...(uid ? { uid } : {}) } };
}
