// One component's view of the store: reads as from its informer cache, each write counted as the API request its upstream component sends.
import { readModifyWrite, type ObjectStore } from './object-store.js';
import { resourceForKind } from './resources.js';
import type { AnyObject, Kind, KindMap } from './kinds.js';
import type { RequestCounts, Verb } from './request-counts.js';

/** What controllers use of the store; the raw store and every client view provide it. */
export type StoreApi = Pick<ObjectStore, 'watch' | 'get' | 'list' | 'count' | 'create' | 'update' | 'modify' | 'delete' | 'forceDelete' | 'existsUid'>;

export interface ApiRequest {
  verb: Verb;
  resource: string;
  subresource?: string;
}

/** A write as the view saw it, for a policy to name the requests upstream sends for it. */
export interface WriteChange {
  kind: Kind;
  old: AnyObject;
  next: AnyObject;
  /** Anything outside `status` changed (metadata, spec, ...). */
  mainChanged: boolean;
  statusChanged: boolean;
}

export interface ClientPolicy {
  /** The upstream client; a function when one bench controller stands for several (pvc- and pv-protection). */
  client: string | ((kind: Kind) => string);
  /** Kinds this component GETs from the API server instead of its informer cache. */
  directGets?: readonly Kind[];
  /**
   * The requests for an update; undefined falls back to the default: `update` of the
   * resource for changes outside status, `update` of `status` for status changes (two
   * requests when both change, since the API server drops status changes sent to the main
   * resource of a kind with a status subresource, and the other way round).
   */
  writes?: (w: WriteChange) => ApiRequest[] | undefined;
}

export function pluralOf(kind: Kind): string {
  return resourceForKind(kind)?.plural ?? `${kind.toLowerCase()}s`;
}

/** The default requests for an update (see ClientPolicy.writes). */
export function defaultWrites(w: WriteChange): ApiRequest[] {
  const resource = pluralOf(w.kind);
  if (resourceForKind(w.kind)?.statusSubresource !== true) return [{ verb: 'update', resource }];
  const out: ApiRequest[] = [];
  if (w.mainChanged || !w.statusChanged) out.push({ verb: 'update', resource });
  if (w.statusChanged) out.push({ verb: 'update', resource, subresource: 'status' });
  return out;
}

/** Everything but status and the fields the server owns, to tell which part a write changed. */
function mainPart(o: AnyObject): string {
  const { status: _status, metadata, ...rest } = o as AnyObject & { status?: unknown };
  const { resourceVersion: _rv, managedFields: _mf, ...meta } = (metadata ?? {}) as Record<string, unknown>;
  return JSON.stringify([meta, rest]);
}

function statusPart(o: AnyObject): string {
  return JSON.stringify((o as { status?: unknown }).status ?? null);
}

/**
 * The store as one component sees it. Reads are served as from the component's informer
 * cache (no request) unless its policy names the kind as a direct GET; every write is
 * counted as the requests its upstream component sends, then passed to the store.
 */
export class ClientView implements StoreApi {
  constructor(private readonly store: ObjectStore, private readonly counts: RequestCounts, private readonly policy: ClientPolicy) {}

  private clientFor(kind: Kind): string {
    return typeof this.policy.client === 'string' ? this.policy.client : this.policy.client(kind);
  }

  private tally(kind: Kind, requests: readonly ApiRequest[]): void {
    const client = this.clientFor(kind);
    for (const r of requests) this.counts.record(client, r.verb, r.resource, r.subresource);
  }

  watch: ObjectStore['watch'] = (kind, handler) => this.store.watch(kind, handler);

  get<K extends Kind>(kind: K, name: string, namespace?: string): KindMap[K] | undefined {
    if (this.policy.directGets?.includes(kind)) this.tally(kind, [{ verb: 'get', resource: pluralOf(kind) }]);
    return this.store.get(kind, name, namespace);
  }

  list<K extends Kind>(kind: K, namespace?: string): KindMap[K][] {
    return this.store.list(kind, namespace);
  }

  count(kind: Kind): number {
    return this.store.count(kind);
  }

  create<K extends Kind>(kind: K, input: KindMap[K]): KindMap[K] {
    this.tally(kind, [{ verb: 'create', resource: pluralOf(kind) }]);
    return this.store.create(kind, input);
  }

  update<K extends Kind>(kind: K, input: KindMap[K]): KindMap[K] {
    const old = this.store.get(kind, input.metadata?.name ?? '', input.metadata?.namespace);
    if (old !== undefined) {
      const change: WriteChange = { kind, old, next: input, mainChanged: mainPart(old) !== mainPart(input), statusChanged: statusPart(old) !== statusPart(input) };
      this.tally(kind, this.policy.writes?.(change) ?? defaultWrites(change));
    } else {
      this.tally(kind, [{ verb: 'update', resource: pluralOf(kind) }]);
    }
    return this.store.update(kind, input);
  }

  modify<K extends Kind>(kind: K, name: string, namespace: string | undefined, mutate: (o: KindMap[K]) => boolean | void): KindMap[K] | undefined {
    // Reads are the component's cached copy (no request); each write is counted.
    return readModifyWrite(kind, name, namespace, mutate, (k, n, ns) => this.store.get(k, n, ns), (k, o) => this.update(k, o));
  }


  delete(kind: Kind, name: string, namespace?: string, graceful = false): boolean {
    this.tally(kind, [{ verb: 'delete', resource: pluralOf(kind) }]);
    return this.store.delete(kind, name, namespace, graceful);
  }

  forceDelete(kind: Kind, name: string, namespace?: string): boolean {
    this.tally(kind, [{ verb: 'delete', resource: pluralOf(kind) }]);
    return this.store.forceDelete(kind, name, namespace);
  }

  existsUid(kind: Kind, uid: string): boolean {
    return this.store.existsUid(kind, uid);
  }
}
