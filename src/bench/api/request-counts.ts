// API requests counted by client, verb and resource: the load a run would put on a real kube-apiserver.

export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection';

const VERBS: readonly string[] = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection'];

export function isVerb(v: string): v is Verb {
  return VERBS.includes(v);
}

export interface RequestCount {
  /** The upstream component the request stands for, e.g. "kube-scheduler", "kubelet@node-3". */
  client: string;
  verb: Verb;
  /** Plural resource name, with "/subresource" when the request goes to one ("pods/binding"). */
  resource: string;
  count: number;
}

export interface RequestTotals {
  total: number;
  /** Direct GETs: reads a component does not serve from its informer cache. */
  reads: number;
  writes: number;
  listWatch: number;
  byVerb: Record<string, number>;
}

/** One informer: a LIST when it starts, then a long-running WATCH that is re-opened when it times out. */
interface Informer {
  client: string;
  resource: string;
  startedMs: number;
}

/**
 * client-go's reflector asks for a watch timeout picked at random between minWatchTimeout
 * (5 min) and twice that, then opens a new watch from where it left off (no new LIST); the
 * mean, 7.5 min, stands for it so the count does not depend on a random draw.
 */
export const REWATCH_MS = 450_000;

/**
 * The counter. Controllers reach it through their client views (writes and direct reads)
 * and their informer registrations; the HTTP server calls `record` for external clients.
 */
export class RequestCounts {
  private readonly counts = new Map<string, RequestCount>();
  private readonly informers: Informer[] = [];

  record(client: string, verb: Verb, resource: string, subresource?: string, n = 1): void {
    const res = subresource ? `${resource}/${subresource}` : resource;
    const key = `${client}\u0000${verb}\u0000${res}`;
    const c = this.counts.get(key);
    if (c !== undefined) c.count += n;
    else this.counts.set(key, { client, verb, resource: res, count: n });
  }

  /** The informers a component opens when it starts: one LIST now, watches counted up to `now` by `rows`. */
  informer(client: string, resources: readonly string[], nowMs: number): void {
    for (const resource of resources) {
      this.informers.push({ client, resource, startedMs: nowMs });
      this.record(client, 'list', resource);
    }
  }

  /**
   * A client's process restarted: its informers list every resource again. The watch that
   * follows takes the old one's place, so the watch count goes on as before.
   */
  relist(client: string, resources: readonly string[]): void {
    for (const resource of resources) this.record(client, 'list', resource);
  }

  /** Every count up to virtual time `nowMs`, the informers' watches included; sorted by client, resource, verb. */
  rows(nowMs: number): RequestCount[] {
    const all = new Map(this.counts);
    const add = (client: string, resource: string, n: number): void => {
      const key = `${client}\u0000watch\u0000${resource}`;
      const c = all.get(key);
      all.set(key, { client, verb: 'watch', resource, count: (c?.count ?? 0) + n });
    };
    for (const i of this.informers) add(i.client, i.resource, 1 + Math.floor(Math.max(0, nowMs - i.startedMs) / REWATCH_MS));
    return [...all.values()].sort((a, b) => a.client.localeCompare(b.client) || a.resource.localeCompare(b.resource) || a.verb.localeCompare(b.verb));
  }
}

export function totals(rows: readonly RequestCount[]): RequestTotals {
  const t: RequestTotals = { total: 0, reads: 0, writes: 0, listWatch: 0, byVerb: {} };
  for (const r of rows) {
    t.total += r.count;
    t.byVerb[r.verb] = (t.byVerb[r.verb] ?? 0) + r.count;
    if (r.verb === 'list' || r.verb === 'watch') t.listWatch += r.count;
    else if (r.verb === 'get') t.reads += r.count;
    else t.writes += r.count;
  }
  return t;
}
