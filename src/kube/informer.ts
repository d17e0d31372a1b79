// A list-then-watch cache of one resource: listed once, kept current by a watch from the list's resourceVersion, listed again only when the server has lost that place (410 Gone).
import { pause, watchTimeoutSeconds } from './watch-timing.js';
import type { KubeApis, KubeClient } from './kube-client.js';
import { apiStatus, describeApiError } from './kube-errors.js';
import type { WatchEvent } from './http-transport.js';
import { log } from '../util/log.js';

/** A list answer, as the thin APIs shape it (client-node's names: `_continue`). */
export interface ListAnswer<T> {
  items: T[];
  metadata?: { resourceVersion?: string; _continue?: string };
}

/** How the informer lists and watches its resource: the feature's own calls, so the RBAC scan sees them where they are made. */
export interface InformerSource<T> {
  /** For logs: "persistentvolumes", "nodes", ... */
  what: string;
  list(apis: KubeApis, page: { limit: number; _continue?: string }): Promise<ListAnswer<T>>;
  watch(apis: KubeApis, from: { resourceVersion: string; timeoutSeconds: number; allowWatchBookmarks: true }, onEvent: (event: WatchEvent) => void): Promise<void>;
}

/**
 * What the informer holds of an object: `undefined` holds nothing (an object the feature
 * never needs, or one that has left its interest), anything else is kept under the object's
 * namespace/name. A small kept form is what bounds a node's memory in a large cluster.
 */
export type Keep<T, K> = (object: T) => K | undefined;

/** A change the informer applied: the kept form before and after (undefined: not held). */
export interface InformerChange<K> {
  key: string;
  before: K | undefined;
  after: K | undefined;
}

/** Items per list page: a bounded answer per request, however large the cluster. */
export const LIST_PAGE_SIZE = 500;

/** Each list page may take this long at least: a background list is not a CSI call, but it must end. */
const MIN_LIST_TIMEOUT_MS = 10_000;

/** A failed list or watch is tried again after this long, doubling to the cap. */
const RETRY_FIRST_MS = 1_000;
const RETRY_MAX_MS = 30_000;

/** The figures a test or the bench reads: how many lists and watches the informer has made. */
export interface InformerCounts {
  lists: number;
  watches: number;
  relistsAfterGone: number;
}

function keyOf(object: unknown): string | undefined {
  const meta = (object as { metadata?: { name?: unknown; namespace?: unknown } }).metadata;
  if (typeof meta?.name !== 'string' || meta.name === '') return undefined;
  return typeof meta.namespace === 'string' && meta.namespace !== '' ? `${meta.namespace}/${meta.name}` : meta.name;
}

function rvOf(object: unknown): string | undefined {
  const rv = (object as { metadata?: { resourceVersion?: unknown } }).metadata?.resourceVersion;
  return typeof rv === 'string' && rv !== '' ? rv : undefined;
}

/** A 410 Gone, as an HTTP answer or as a watch's ERROR event (a Status with code 410). */
function isGone(err: unknown): boolean {
  return apiStatus(err) === 410;
}

/** A list page that failed: its message says which page and why. */
class ListError extends Error {}

class GoneError extends Error {
  readonly code = 410;
}

export class Informer<T, K> {
  private readonly held = new Map<string, K>();
  private readonly listeners = new Set<(changes: readonly InformerChange<K>[]) => void>();
  private readonly stopping = new AbortController();
  private running: Promise<void> | undefined;
  private resourceVersion: string | undefined;
  private syncedNow = false;
  private syncWaiters: (() => void)[] = [];
  readonly counts: InformerCounts = { lists: 0, watches: 0, relistsAfterGone: 0 };
  /** Why the last list or watch failed, until a list completes. */
  lastError: string | undefined;

  constructor(private readonly kube: KubeClient, private readonly source: InformerSource<T>, private readonly keep: Keep<T, K>) {}

  /** Lists, then watches, until stop(). */
  start(): void {
    this.running ??= this.run();
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    await this.running;
    for (const w of this.syncWaiters) w();
    this.syncWaiters = [];
  }

  /**
   * True once a list has completed and while its cache is followed by a watch (or being
   * re-watched from its place). False again while a 410 forces a new list: a feature that
   * must not act on part of the objects waits for it.
   */
  get synced(): boolean {
    return this.syncedNow;
  }

  /** Resolves when the informer is synced (or stopped). */
  whenSynced(): Promise<void> {
    if (this.syncedNow || this.stopping.signal.aborted) return Promise.resolve();
    return new Promise((resolve) => this.syncWaiters.push(resolve));
  }

  /** Called with every batch of changes applied (a list's differences, or one watch event). */
  onChange(listener: (changes: readonly InformerChange<K>[]) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get(key: string): K | undefined {
    return this.held.get(key);
  }

  values(): K[] {
    return [...this.held.values()];
  }

  get size(): number {
    return this.held.size;
  }

  private async run(): Promise<void> {
    const signal = this.stopping.signal;
    let retryMs = RETRY_FIRST_MS;
    while (!signal.aborted) {
      try {
        if (this.resourceVersion === undefined) await this.relist();
        retryMs = RETRY_FIRST_MS;
        const opened = Date.now();
        await this.watchOnce();
        // A watch the server (or a proxy) ends at once is not re-opened in a tight loop.
        if (Date.now() - opened < RETRY_FIRST_MS) await pause(RETRY_FIRST_MS, signal);
      } catch (err) {
        if (signal.aborted) break;
        if (isGone(err)) {
          // The server no longer has the changes since our place (compacted): only a new list
          // can tell what happened in between. Until it completes, the cache is not whole.
          this.counts.relistsAfterGone++;
          this.resourceVersion = undefined;
          this.syncedNow = false;
          log('info', 'informer: the server no longer has the changes since our place (410 Gone); listing again', { resource: this.source.what });
          continue;
        }
        this.lastError = err instanceof ListError ? err.message : describeApiError(err, `watch ${this.source.what}`);
        log('warn', 'informer: list or watch failed; trying again', { resource: this.source.what, retryMs, error: this.lastError });
        await pause(retryMs, signal);
        retryMs = Math.min(retryMs * 2, RETRY_MAX_MS);
      }
    }
  }

  /** Lists every object, page by page, and makes the cache equal to the list. */
  private async relist(): Promise<void> {
    const timeoutMs = Math.max(this.kube.options.callTimeoutMs, MIN_LIST_TIMEOUT_MS);
    const fresh = new Map<string, K>();
    let token: string | undefined;
    let rv: string | undefined;
    for (let page = 1; ; page++) {
      const what = `list ${this.source.what} (page ${page})`;
      let answer: ListAnswer<T>;
      try {
        answer = await this.kube.bounded(what, (a) => this.source.list(a, { limit: LIST_PAGE_SIZE, ...(token !== undefined ? { _continue: token } : {}) }), timeoutMs);
      } catch (err) {
        // An expired continue token (410) starts the list over, like a watch's.
        if (isGone(err)) throw err;
        throw new ListError(describeApiError(err, what));
      } finally {
        this.counts.lists++;
      }
      if (!Array.isArray(answer?.items)) throw new ListError(`${what}: the answer holds no items list`);
      for (const item of answer.items) {
        const key = keyOf(item);
        const kept = key === undefined ? undefined : this.keep(item);
        if (key !== undefined && kept !== undefined) fresh.set(key, kept);
      }
      // The first page's resourceVersion is the list's: later pages are read at the same one.
      rv ??= answer.metadata?.resourceVersion;
      token = answer.metadata?._continue;
      if (token === undefined || token === '') break;
    }
    if (rv === undefined) throw new Error(`list ${this.source.what}: the answer has no resourceVersion to watch from`);
    const changes: InformerChange<K>[] = [];
    for (const [key, before] of this.held) if (!fresh.has(key)) changes.push({ key, before, after: undefined });
    for (const [key, after] of fresh) changes.push({ key, before: this.held.get(key), after });
    this.held.clear();
    for (const [k, v] of fresh) this.held.set(k, v);
    this.resourceVersion = rv;
    this.lastError = undefined;
    this.markSynced();
    this.emit(changes);
  }

  /** One watch from the cache's place, until the server ends it; the place moves with every event and bookmark. */
  private async watchOnce(): Promise<void> {
    const from = this.resourceVersion;
    if (from === undefined) return;
    this.counts.watches++;
    let failure: Error | undefined;
    await this.kube.streaming((a) => this.source.watch(a, { resourceVersion: from, timeoutSeconds: watchTimeoutSeconds(), allowWatchBookmarks: true }, (event) => {
      if (failure !== undefined) return;
      if (event.type === 'ERROR') {
        const code = (event.object as { code?: unknown }).code;
        const message = String((event.object as { message?: unknown }).message ?? 'no message');
        failure = code === 410 ? new GoneError(`watch ${this.source.what}: ${message}`) : new Error(`watch ${this.source.what}: the server sent an error: ${message}`);
        return;
      }
      const rv = rvOf(event.object);
      if (event.type === 'BOOKMARK') {
        if (rv !== undefined) this.resourceVersion = rv;
        return;
      }
      this.apply(event.type, event.object as T);
      if (rv !== undefined) this.resourceVersion = rv;
    }), this.stopping.signal).catch((err: unknown) => {
      if (!this.stopping.signal.aborted) throw err;
    });
    if (failure !== undefined) throw failure;
  }

  private apply(type: string, object: T): void {
    const key = keyOf(object);
    if (key === undefined) return;
    const before = this.held.get(key);
    const after = type === 'DELETED' ? undefined : this.keep(object);
    if (after === undefined) this.held.delete(key);
    else this.held.set(key, after);
    if (before === undefined && after === undefined) return;
    this.emit([{ key, before, after }]);
  }

  private markSynced(): void {
    this.syncedNow = true;
    for (const w of this.syncWaiters) w();
    this.syncWaiters = [];
  }

  private emit(changes: InformerChange<K>[]): void {
    if (changes.length === 0) return;
    for (const l of this.listeners) {
      try {
        l(changes);
      } catch (err) {
        log('warn', 'informer: a listener failed', { resource: this.source.what, error: (err as Error).message });
      }
    }
  }
}
