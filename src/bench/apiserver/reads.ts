// get and list: one object, or the objects a namespace, label and field selector pick, in pages of `limit` with a `continue` token.
import { objectKey, type AnyObject } from '../api/kinds.js';
import type { ObjectStore } from '../api/object-store.js';
import type { ResourceType } from '../api/resources.js';
import { fieldsMatch, parseFieldSelector, UnsupportedFieldError, type FieldRequirement } from './field-selector.js';
import { parseLabelSelector, SelectorSyntaxError } from './label-selector.js';
import { labelsMatch, type LabelRequirement } from '../api/selectors.js';
import { getNamespace, listNamespaces } from './namespaces.js';
import { badRequest, expired, notFound } from './status.js';
import type { WatchHistory } from './watch-history.js';

export interface Selection {
  namespace: string | undefined;
  labels: LabelRequirement[];
  fields: FieldRequirement[];
}

export function parseSelection(r: ResourceType, q: URLSearchParams, namespace: string | undefined): Selection {
  try {
    return { namespace, labels: parseLabelSelector(q.get('labelSelector') ?? ''), fields: parseFieldSelector(r.kind, q.get('fieldSelector') ?? '') };
  } catch (err) {
    if (err instanceof SelectorSyntaxError || err instanceof UnsupportedFieldError) throw badRequest(err.message);
    throw err;
  }
}

export function selects(r: ResourceType, s: Selection, o: AnyObject): boolean {
  if (s.namespace !== undefined && r.namespaced && o.metadata?.namespace !== s.namespace) return false;
  return labelsMatch(s.labels, o.metadata?.labels) && fieldsMatch(r.kind, s.fields, o);
}

/** Objects served beside the store (the run's Events). */
export interface ServedBeside {
  list(): AnyObject[];
  get(name: string, namespace: string | undefined): AnyObject | undefined;
}

/** Every object of the resource, namespaces synthesised where none is stored, Events from the run's log beside stored ones. */
export function allObjects(store: ObjectStore, r: ResourceType, events?: ServedBeside): AnyObject[] {
  if (r.kind === 'Namespace') return listNamespaces(store);
  if (r.kind === 'Event' && events !== undefined) {
    const all = [...store.list('Event'), ...events.list()];
    const key = (o: AnyObject): string => `${o.metadata?.namespace}/${o.metadata?.name}`;
    return all.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
  }
  return store.list(r.kind);
}

export function getObject(store: ObjectStore, r: ResourceType, name: string, namespace: string | undefined, events?: ServedBeside): AnyObject {
  const o = r.kind === 'Namespace' ? getNamespace(store, name) : (store.get(r.kind, name, r.namespaced ? namespace : undefined) ?? (r.kind === 'Event' ? events?.get(name, namespace) : undefined));
  if (o === undefined) throw notFound(r, name);
  return o;
}

interface ContinueToken {
  /** The resourceVersion of the list's first page. */
  rv: number;
  /** The key of the last object sent. */
  after: string;
}

function decodeContinue(token: string): ContinueToken {
  try {
    const t = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as Partial<ContinueToken>;
    if (typeof t.rv === 'number' && typeof t.after === 'string') return t as ContinueToken;
  } catch { /* fall through */ }
  throw badRequest(`continue key is not valid: ${token}`);
}

export interface ListPage {
  items: AnyObject[];
  resourceVersion: string;
  continue?: string;
  remainingItemCount?: number;
}

/**
 * A page of the selection. Without `limit` everything is returned, as upstream does. A
 * later page is read from the current state after the token's last key (the bench keeps no
 * snapshots to serve the first page's state from); a token older than the watch history
 * is refused with 410 Expired, as upstream refuses one older than etcd's compaction.
 */
export function listPage(store: ObjectStore, history: WatchHistory, r: ResourceType, s: Selection, q: URLSearchParams, events?: ServedBeside): ListPage {
  const limitText = q.get('limit');
  const limit = limitText === null || limitText === '' ? 0 : Number(limitText);
  if (!Number.isInteger(limit) || limit < 0) throw badRequest(`limit must be a non-negative integer, not ${JSON.stringify(limitText)}`);
  const cont = q.get('continue');
  let after: string | undefined;
  let rv = Number(store.resourceVersion);
  if (cont !== null && cont !== '') {
    const t = decodeContinue(cont);
    if (t.rv < history.oldestResumable) throw expired('The provided continue parameter is too old: the changes since its list are no longer kept. Start a new list without it.');
    after = t.after;
    rv = t.rv;
  }
  let items = allObjects(store, r, events).filter((o) => selects(r, s, o));
  if (after !== undefined) items = items.filter((o) => objectKey(o) > after!);
  if (limit === 0 || items.length <= limit) return { items, resourceVersion: String(rv) };
  const page = items.slice(0, limit);
  const token = Buffer.from(JSON.stringify({ rv, after: objectKey(page.at(-1)!) } satisfies ContinueToken)).toString('base64url');
  return { items: page, resourceVersion: String(rv), continue: token, remainingItemCount: items.length - limit };
}
