// create, update, patch and delete from API clients: checked as the API server checks them, applied through the runtime's external-writes door, each logged as an ApiWrite event.
import { objectKey, type AnyObject, type Kind } from '../api/kinds.js';
import { KINDS, type ResourceType } from '../api/resources.js';
import type { ObjectStore } from '../api/object-store.js';
import type { EventLog } from '../api/event-log.js';
import { ANN_PROVISIONED_BY } from '../api/annotations.js';
import { setCreateGeneration, setUpdateGeneration } from '../api/generation.js';
import { admit } from './admission-seam.js';
import { getNamespace } from './namespaces.js';
import { applyPatch } from './patch/apply-patch.js';
import { isPlainObject } from './patch/merge-patch.js';
import { alreadyExists, badRequest, conflict, deletedStatus, invalid, methodNotAllowed, notFound, StatusError } from './status.js';
import { toJson, toJsonText, typed } from './wire.js';
import { checkBodyFields, checkPatchedFields, type FieldValidation } from './field-validation.js';

/** What the writes need of the cluster. */
export interface WriteBackend {
  store: ObjectStore;
  events: EventLog;
  external: { submit<T>(label: string, write: () => T, order?: string): Promise<T> };
  driverName: string;
}

export interface WriteTarget {
  r: ResourceType;
  namespace: string | undefined;
  name: string | undefined;
  subresource: string | undefined;
  /** The User-Agent's first token: who wrote, in the event log. */
  client: string;
  /** The whole User-Agent (a Lode driver's names its node): orders writes that arrive together. */
  userAgent: string;
  dryRun: boolean;
  /** The clock's display shift: the stored object's Dates go to the client, and to patches, moved by it. */
  displayShiftMs: number;
  /** What to do with fields the kind's schema does not declare (?fieldValidation). */
  fieldValidation: FieldValidation;
  /** Warnings for the response's Warning headers, added to by the write. */
  warnings: string[];
}

type Obj = Record<string, unknown>;
type Meta = { name?: string; namespace?: string; resourceVersion?: string; uid?: string; generateName?: string; finalizers?: string[]; ownerReferences?: { uid?: string }[]; deletionTimestamp?: unknown };

/** Where a write goes among those queued with it (ExternalWrites.apply): by client, then request and object. */
export function writeOrder(t: WriteTarget, verb: string, name: string): string {
  return [t.userAgent, verb, t.r.plural, t.namespace ?? '', name].join('\0');
}

function meta(o: unknown): Meta {
  return ((o as Obj).metadata ?? {}) as Meta;
}

function asObject(body: unknown): Obj {
  if (!isPlainObject(body)) throw badRequest('the request body must be a JSON object');
  return body as Obj;
}

/** The body's apiVersion and kind, when given, must be the resource's: a Pod POSTed to /pvc is a client bug. */
function checkType(r: ResourceType, o: Obj): void {
  if (o.kind !== undefined && o.kind !== r.kind) throw badRequest(`the object's kind ${JSON.stringify(o.kind)} does not match the resource ${r.plural} (kind ${r.kind})`);
  if (o.apiVersion !== undefined && o.apiVersion !== r.apiVersion) throw badRequest(`the object's apiVersion ${JSON.stringify(o.apiVersion)} does not match ${r.apiVersion}, the version of this URL`);
}

function record(b: WriteBackend, t: WriteTarget, verb: string, o: AnyObject): void {
  // A leader's Lease renewal every few seconds is a heartbeat, not a change: logging each would
  // bury the run's events and keep a `settled` wait from ever seeing quiet. Taking a Lease is logged.
  if (t.r.kind === 'Lease' && verb !== 'create' && verb !== 'delete') return;
  const what = `${t.r.plural}${t.subresource ? `/${t.subresource}` : ''}`;
  b.events.record(`api/${t.client}`, { kind: t.r.kind, metadata: { name: o.metadata?.name ?? '', ...(o.metadata?.namespace ? { namespace: o.metadata.namespace } : {}) } }, 'Normal', 'ApiWrite', `${verb} ${what} ${objectKey(o)} by ${t.client}${verb === 'create' && t.r.kind === 'Event' ? eventSummary(o) : ''}`);
}

/** What a client's Event says, so the run's log shows it (the Event itself is served from the store, not the log). */
function eventSummary(o: AnyObject): string {
  const e = o as { type?: string; reason?: string; message?: string; involvedObject?: { kind?: string; name?: string } };
  return `: ${e.type ?? ''} ${e.reason ?? ''} on ${e.involvedObject?.kind ?? ''}/${e.involvedObject?.name ?? ''}: ${e.message ?? ''}`;
}

function admitted(t: WriteTarget, name: string, next: Obj, old: Obj | undefined): Obj {
  const a = admit(t.r.kind, next, old);
  if (a.errors.length > 0) throw invalid(t.r, name, a.errors);
  return a.object;
}

/** Status a create starts with for kinds whose status is the controllers' (as each registry strategy resets it). */
function initialStatus(kind: Kind): Obj | undefined {
  switch (kind) {
    case 'Pod': return { phase: 'Pending' };
    case 'PersistentVolumeClaim': return { phase: 'Pending' };
    case 'PersistentVolume': return { phase: 'Pending' };
    default: return undefined;
  }
}

export async function createObject(b: WriteBackend, t: WriteTarget, body: unknown): Promise<AnyObject> {
  const o = structuredClone(asObject(body));
  checkType(t.r, o);
  t.warnings.push(...checkBodyFields(t.r, o, t.fieldValidation));
  if (o.metadata !== undefined && !isPlainObject(o.metadata)) throw badRequest('metadata must be an object');
  const m = (o.metadata ??= {}) as Meta;
  if (t.r.namespaced) {
    if (t.namespace === undefined) throw methodNotAllowed(`${t.r.plural} are namespaced: POST to /…/namespaces/NAMESPACE/${t.r.plural}`);
    if (m.namespace !== undefined && m.namespace !== '' && m.namespace !== t.namespace) throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    m.namespace = t.namespace;
  } else {
    delete m.namespace;
  }
  if (m.resourceVersion !== undefined && m.resourceVersion !== '') throw badRequest('resourceVersion should not be set on objects to be created');
  delete m.uid;
  if (t.r.kind === 'Node') throw methodNotAllowed('nodes join the bench through a scenario (a Node with the lode.csi.dev/pools annotation starts a real driver); creating one through the API is not modelled');
  const name = m.name ?? '';
  if (name === '' && !m.generateName) throw invalid(t.r, name, [{ field: 'metadata.name', type: 'FieldValueRequired', message: 'Required value: name or generateName is required' }]);
  if (t.r.kind === 'PersistentVolume') refuseStaticLodeVolume(b, t, o);
  if (t.r.statusSubresource) {
    const s = initialStatus(t.r.kind);
    if (s === undefined) delete o.status;
    else o.status = s;
  }
  const next = admitted(t, name, { ...o, apiVersion: t.r.apiVersion, kind: t.r.kind }, undefined);
  return b.external.submit(`create ${t.r.plural}`, () => {
    if (name !== '') {
      const exists = t.r.kind === 'Namespace' ? getNamespace(b.store, name) : b.store.get(t.r.kind, name, t.namespace);
      if (exists !== undefined) throw alreadyExists(t.r, name);
    }
    if (t.dryRun) {
      // What the store would answer, generation included.
      const would = structuredClone(next) as AnyObject;
      setCreateGeneration(t.r.kind, would);
      return typed(t.r, would);
    }
    const created = b.store.create(t.r.kind, next as AnyObject);
    record(b, t, 'create', created);
    return typed(t.r, created);
  }, writeOrder(t, 'create', name !== '' ? name : m.generateName ?? ''));
}

/** A Lode PV without provisioned-by stands for a volume the bench makes when a scenario applies it; an API client would get a PV naming no volume. */
function refuseStaticLodeVolume(b: WriteBackend, t: WriteTarget, o: Obj): void {
  const spec = o.spec as { csi?: { driver?: string } } | undefined;
  const ann = (meta(o) as { annotations?: Record<string, string> }).annotations ?? {};
  if (spec?.csi?.driver === b.driverName && ann[ANN_PROVISIONED_BY] === undefined) {
    throw invalid(t.r, meta(o).name ?? '', [{ field: 'spec.csi', type: 'FieldValueForbidden', message: `Forbidden: a static ${b.driverName} volume is made by the bench when a scenario applies its PersistentVolume; through the API it would name no volume on any node` }]);
  }
}

/** The current object, for a write: stored, or a synthesised namespace (which a write then stores). */
function current(b: WriteBackend, t: WriteTarget, name: string): { object: AnyObject; stored: boolean } {
  const stored = b.store.get(t.r.kind, name, t.r.namespaced ? t.namespace : undefined);
  if (stored !== undefined) return { object: stored, stored: true };
  if (t.r.kind === 'Namespace') {
    const synth = getNamespace(b.store, name);
    if (synth !== undefined) return { object: synth, stored: false };
  }
  throw notFound(t.r, name);
}

/**
 * The common end of update and patch, run between reconciles: URL and body agree, the
 * resourceVersion (when given) is current, status goes only through /status and the rest
 * only through the main resource, admission passes, and an update that changes nothing
 * writes nothing (as upstream skips a no-op).
 */
function commit(b: WriteBackend, t: WriteTarget, verb: string, name: string, cur: { object: AnyObject; stored: boolean }, input: Obj): AnyObject {
  const m = meta(input);
  if (m.name !== undefined && m.name !== name) throw badRequest(`the name of the object (${m.name}) does not match the name on the URL (${name})`);
  if (t.r.namespaced && m.namespace !== undefined && m.namespace !== '' && m.namespace !== t.namespace) throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
  // Shifted as the client saw it, so a read-modify-write of an unchanged object compares equal.
  const old = toJson(cur.object, t.displayShiftMs) as Obj;
  const rv = m.resourceVersion;
  if (cur.stored && rv !== undefined && rv !== '' && rv !== meta(old).resourceVersion) throw conflict(t.r, name);
  let next: Obj;
  if (t.subresource === 'status') {
    next = { ...old, status: input.status };
    if (input.status === undefined) delete next.status;
  } else {
    next = { ...input };
    if (t.r.statusSubresource) {
      if (old.status === undefined) delete next.status;
      else next.status = old.status;
    }
  }
  const { namespace: _bodyNamespace, ...rest } = (next.metadata ?? {}) as Meta;
  next.metadata = { ...rest, name, ...(t.r.namespaced ? { namespace: t.namespace } : {}) };
  next.apiVersion = t.r.apiVersion;
  next.kind = t.r.kind;
  next = admitted(t, name, next, old);
  const unchanged = (x: Obj): string => toJsonText({ ...x, metadata: { ...(x.metadata as Obj), resourceVersion: undefined, managedFields: undefined, generation: undefined } });
  if (cur.stored && unchanged(next) === unchanged(old)) return typed(t.r, cur.object);
  if (t.dryRun) {
    if (cur.stored) setUpdateGeneration(t.r.kind, next as AnyObject, old as AnyObject);
    return typed(t.r, next as AnyObject);
  }
  let written: AnyObject;
  if (cur.stored) {
    (next.metadata as Meta).resourceVersion = meta(old).resourceVersion;
    written = b.store.update(t.r.kind, next as AnyObject);
  } else {
    delete (next.metadata as Meta).resourceVersion;
    delete (next.metadata as Meta).uid;
    written = b.store.create(t.r.kind, next as AnyObject);
  }
  record(b, t, verb, written);
  return typed(t.r, written);
}

function needName(t: WriteTarget): string {
  if (t.name === undefined) throw methodNotAllowed();
  return t.name;
}

export async function updateObject(b: WriteBackend, t: WriteTarget, body: unknown): Promise<AnyObject> {
  const name = needName(t);
  const o = structuredClone(asObject(body));
  checkType(t.r, o);
  t.warnings.push(...checkBodyFields(t.r, o, t.fieldValidation));
  return b.external.submit(`update ${t.r.plural}`, () => commit(b, t, 'update', name, current(b, t, name), o), writeOrder(t, 'update', name));
}

/** A patch body as JSON when it is JSON (to quote it in an error), else its text. */
function parsedOrText(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return body;
  }
}

export async function patchObject(b: WriteBackend, t: WriteTarget, contentType: string, body: string): Promise<AnyObject> {
  const name = needName(t);
  return b.external.submit(`patch ${t.r.plural}`, () => {
    const cur = current(b, t, name);
    const patched = applyPatch(t.r, contentType, toJson(typed(t.r, cur.object), t.displayShiftMs), body);
    if (!isPlainObject(patched)) throw badRequest('the patched object is not a JSON object');
    const strategic = contentType.split(';')[0]!.trim() === 'application/strategic-merge-patch+json';
    t.warnings.push(...checkPatchedFields(t.r, patched, parsedOrText(body), strategic, t.fieldValidation));
    const m = meta(patched);
    // A patch may not rename or move the object: that is the immutable-field error upstream gives.
    if (m.name !== name) throw invalid(t.r, name, [{ field: 'metadata.name', type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(m.name ?? '')}: field is immutable` }]);
    if (t.r.namespaced && m.namespace !== t.namespace) throw invalid(t.r, name, [{ field: 'metadata.namespace', type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(m.namespace ?? '')}: field is immutable` }]);
    // A resourceVersion the patch itself carries is a precondition; otherwise the patch applies to whatever is current.
    const patchedRv = m.resourceVersion;
    const original = meta(toJson(cur.object)).resourceVersion;
    const input = patched as Obj;
    if (patchedRv === original) delete (input.metadata as Meta).resourceVersion;
    return commit(b, t, 'patch', name, cur, input);
  }, writeOrder(t, 'patch', name));
}

export interface DeleteOptions {
  gracePeriodSeconds?: number;
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  preconditions?: { uid?: string; resourceVersion?: string };
}

/** DeleteOptions from the body (kubectl sends one) and the query (client libraries often use it). */
export function deleteOptions(body: string, q: URLSearchParams): DeleteOptions {
  let o: Obj = {};
  if (body.trim() !== '') {
    try {
      o = asObject(JSON.parse(body));
    } catch (err) {
      if (err instanceof StatusError) throw err;
      throw badRequest(`the DeleteOptions body is not valid JSON: ${(err as Error).message}`);
    }
  }
  const grace = q.get('gracePeriodSeconds') ?? (o.gracePeriodSeconds === undefined || o.gracePeriodSeconds === null ? null : String(o.gracePeriodSeconds));
  const orphan = q.get('orphanDependents') ?? (typeof o.orphanDependents === 'boolean' ? String(o.orphanDependents) : null);
  const policy = q.get('propagationPolicy') ?? (typeof o.propagationPolicy === 'string' ? o.propagationPolicy : null) ?? (orphan === 'true' ? 'Orphan' : orphan === 'false' ? 'Background' : null);
  if (policy !== null && policy !== 'Orphan' && policy !== 'Background' && policy !== 'Foreground') throw badRequest(`propagationPolicy must be Orphan, Background or Foreground, not ${JSON.stringify(policy)}`);
  if (grace !== null && !/^-?\d+$/.test(grace)) throw badRequest(`gracePeriodSeconds must be an integer, not ${JSON.stringify(grace)}`);
  const pre = isPlainObject(o.preconditions) ? (o.preconditions as DeleteOptions['preconditions']) : undefined;
  return {
    ...(grace !== null ? { gracePeriodSeconds: Number(grace) } : {}),
    ...(policy !== null ? { propagationPolicy: policy } : {}),
    ...(pre ? { preconditions: pre } : {}),
  };
}

/** Removes an owner from every dependent (Orphan): what the garbage collector's orphan finalizer does upstream, done at once. */
function orphanDependents(store: ObjectStore, uid: string): void {
  for (const kind of KINDS) {
    for (const o of store.list(kind)) {
      const refs = o.metadata?.ownerReferences ?? [];
      if (!refs.some((r) => r.uid === uid)) continue;
      store.modify(kind, o.metadata?.name ?? '', o.metadata?.namespace, (x) => { x.metadata!.ownerReferences = refs.filter((r) => r.uid !== uid); });
    }
  }
}

/** What a DELETE answers: the object while its deletion is pending (and for pods), else a Success Status. */
export type DeleteResult = { code: number; body: unknown };

function deleteOne(b: WriteBackend, t: WriteTarget, name: string, opts: DeleteOptions): DeleteResult {
  const cur = b.store.get(t.r.kind, name, t.r.namespaced ? t.namespace : undefined);
  if (cur === undefined) {
    if (t.r.kind === 'Namespace' && getNamespace(b.store, name) !== undefined) {
      throw methodNotAllowed(`namespace "${name}" is not an object the bench stores (it exists because objects live in it); deleting a namespace with its contents is not modelled`);
    }
    throw notFound(t.r, name);
  }
  const m = cur.metadata ?? {};
  const pre = opts.preconditions;
  if (pre?.uid !== undefined && pre.uid !== m.uid) throw conflict(t.r, name, `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${m.uid ?? ''}`);
  if (pre?.resourceVersion !== undefined && pre.resourceVersion !== m.resourceVersion) {
    throw conflict(t.r, name, `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${m.resourceVersion ?? ''}`);
  }
  if (opts.propagationPolicy === 'Foreground') {
    throw badRequest('propagationPolicy Foreground is not modelled: the bench\'s garbage collector deletes dependents in the background after their owner is gone; use Background (the default) or Orphan');
  }
  if (t.dryRun) return { code: 200, body: typed(t.r, cur) };
  if (opts.propagationPolicy === 'Orphan' && m.uid) orphanDependents(b.store, m.uid);
  const onNode = t.r.kind === 'Pod' && Boolean((cur as { spec?: { nodeName?: string } }).spec?.nodeName);
  const hasFinalizers = (m.finalizers ?? []).length > 0;
  if (opts.gracePeriodSeconds === 0 && !hasFinalizers) {
    // Forced: gone from the API now; a node's kubelet still unmounts what the pod had when it sees it gone.
    b.store.forceDelete(t.r.kind, name, t.namespace);
  } else {
    // As the bench's delete step: a pod on a node goes through its kubelet, finalizers hold the rest.
    b.store.delete(t.r.kind, name, t.r.namespaced ? t.namespace : undefined, onNode);
  }
  record(b, t, 'delete', cur);
  const after = b.store.get(t.r.kind, name, t.r.namespaced ? t.namespace : undefined);
  if (after !== undefined) return { code: 200, body: typed(t.r, after) };
  // The pod registry returns the deleted object; the generic one a Success Status naming it.
  if (t.r.kind === 'Pod') return { code: 200, body: typed(t.r, cur) };
  return { code: 200, body: { ...deletedStatus(t.r, name, m.uid) } };
}

export async function deleteObject(b: WriteBackend, t: WriteTarget, opts: DeleteOptions): Promise<DeleteResult> {
  const name = needName(t);
  if (t.subresource !== undefined) throw methodNotAllowed();
  return b.external.submit(`delete ${t.r.plural}`, () => deleteOne(b, t, name, opts), writeOrder(t, 'delete', name));
}

/** deletecollection: every selected object, each as a single delete would, answered with a Success Status. */
export async function deleteCollection(b: WriteBackend, t: WriteTarget, opts: DeleteOptions, select: (o: AnyObject) => boolean): Promise<DeleteResult> {
  return b.external.submit(`deletecollection ${t.r.plural}`, () => {
    const victims = b.store.list(t.r.kind, t.r.namespaced ? t.namespace : undefined).filter(select);
    const items: unknown[] = [];
    for (const v of victims) {
      const r = deleteOne(b, { ...t, namespace: v.metadata?.namespace }, v.metadata?.name ?? '', opts);
      items.push(r.body);
    }
    return { code: 200, body: { kind: `${t.r.kind}List`, apiVersion: t.r.apiVersion, metadata: { resourceVersion: b.store.resourceVersion }, items } };
  }, writeOrder(t, 'deletecollection', ''));
}
