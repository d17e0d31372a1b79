// watch=true: a chunked stream of watch events (JSON lines or protobuf frames) (ADDED, MODIFIED, DELETED, BOOKMARK, ERROR) with upstream's resourceVersion semantics.
import type { ServerResponse } from 'node:http';
import type { AnyObject } from '../api/kinds.js';
import type { ObjectStore } from '../api/object-store.js';
import type { ResourceType } from '../api/resources.js';
import { allObjects, selects, type Selection, type ServedBeside } from './reads.js';
import { expired, badRequest } from './status.js';
import { toJsonText, typed } from './wire.js';
import type { Change, WatchHistory } from './watch-history.js';

export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

/** Turns one event's object into what is sent (the object itself, or a one-row Table). */
export type EventEncoder = (object: AnyObject, first: boolean) => unknown;

export interface WatchOptions {
  store: ObjectStore;
  history: WatchHistory;
  resource: ResourceType;
  selection: Selection;
  query: URLSearchParams;
  contentType: string;
  encode: EventEncoder;
  /** Tables carry no bookmarks: kubectl's printer has no row for them. */
  bookmarksAllowed: boolean;
  /** How often a watch that allows bookmarks gets one (wall milliseconds). */
  bookmarkEveryMs?: number;
  /** The run's Events, served beside the store. */
  events?: ServedBeside;
  /** Writes one event as a protobuf frame instead of a JSON line (the client asked for protobuf). */
  frame?: (type: EventType, object: unknown) => Buffer;
  /** Called when the stream ends, to forget it. */
  onEnd: () => void;
  /** The clock's display shift, read per event: a hold that starts re-sets it under an open watch. */
  displayShiftMs: () => number;
}

/** What a change looks like to a watch with this selection: objects entering or leaving it are ADDED or DELETED, as the watch cache sends them. */
export function eventFor(r: ResourceType, s: Selection, c: Change): { type: EventType; object: AnyObject } | undefined {
  if (c.kind !== r.kind) return undefined;
  const now = selects(r, s, c.object);
  const before = c.old !== undefined && selects(r, s, c.old);
  switch (c.type) {
    case 'ADDED': return now ? { type: 'ADDED', object: c.object } : undefined;
    case 'DELETED': return now ? { type: 'DELETED', object: c.object } : undefined;
    case 'MODIFIED':
      if (now && before) return { type: 'MODIFIED', object: c.object };
      if (now) return { type: 'ADDED', object: c.object };
      if (before) return { type: 'DELETED', object: c.object };
      return undefined;
  }
}

/** Starts the stream; returns a function that ends it (server shutdown). */
export function serveWatch(res: ServerResponse, o: WatchOptions): () => void {
  const q = o.query;
  const rvText = q.get('resourceVersion') ?? '';
  const sendInitial = q.get('sendInitialEvents') === 'true';
  if (rvText !== '' && !/^\d+$/.test(rvText)) throw badRequest(`invalid resourceVersion: ${JSON.stringify(rvText)}`);
  const timeoutText = q.get('timeoutSeconds');
  const timeoutS = timeoutText === null ? 0 : Number(timeoutText);
  if (!Number.isFinite(timeoutS) || timeoutS < 0) throw badRequest(`timeoutSeconds must be a non-negative number`);
  let replay: Change[] | undefined;
  if (rvText !== '' && rvText !== '0' && !sendInitial) {
    replay = o.history.since(Number(rvText));
  }
  res.writeHead(200, { 'Content-Type': o.contentType, 'Transfer-Encoding': 'chunked', 'Cache-Control': 'no-cache, private' });
  // Headers go now, as upstream's watch handler flushes them: a client's Watch() call returns only
  // when they arrive, and kubectl wait (and get -w) would otherwise sit until the first event or bookmark.
  res.flushHeaders();
  let first = true;
  let ended = false;
  const send = (type: EventType, object: unknown): void => {
    if (ended) return;
    if (o.frame !== undefined) res.write(o.frame(type, object));
    else res.write(toJsonText({ type, object }, o.displayShiftMs()) + '\n');
  };
  const sendObject = (type: EventType, object: AnyObject): void => {
    send(type, o.encode(typed(o.resource, object), first));
    first = false;
  };
  const bookmark = (annotations?: Record<string, string>): void => {
    send('BOOKMARK', { kind: o.resource.kind, apiVersion: o.resource.apiVersion, metadata: { resourceVersion: o.store.resourceVersion, ...(annotations ? { annotations } : {}) } });
  };
  const timers: NodeJS.Timeout[] = [];
  const stop = (): void => {
    if (ended) return;
    ended = true;
    unsubscribe();
    for (const t of timers) clearTimeout(t);
    res.end();
    o.onEnd();
  };
  // Subscribed before the current state is read: nothing between the two can be missed (both run in one turn).
  const unsubscribe = o.history.subscribe((c) => {
    const e = eventFor(o.resource, o.selection, c);
    if (e !== undefined) sendObject(e.type, e.object);
  });
  if (replay === undefined && rvText !== '' && rvText !== '0' && !sendInitial) {
    // The changes after that version are gone: the client must list again.
    send('ERROR', expired(`too old resource version: ${rvText} (${o.history.oldestResumable})`).body());
    stop();
    return stop;
  }
  if (replay !== undefined) {
    for (const c of replay) {
      const e = eventFor(o.resource, o.selection, c);
      if (e !== undefined) sendObject(e.type, e.object);
    }
  } else {
    // "" or "0": the current state as synthetic ADDED events, then changes.
    for (const obj of allObjects(o.store, o.resource, o.events)) if (selects(o.resource, o.selection, obj)) sendObject('ADDED', obj);
    if (sendInitial && o.bookmarksAllowed) bookmark({ 'k8s.io/initial-events-end': 'true' });
  }
  if (q.get('allowWatchBookmarks') === 'true' && o.bookmarksAllowed) {
    const every = o.bookmarkEveryMs ?? 30_000;
    const tick = (): void => { bookmark(); timers.push(setTimeout(tick, every)); };
    timers.push(setTimeout(tick, every));
  }
  if (timeoutS > 0) timers.push(setTimeout(stop, timeoutS * 1000));
  res.on('close', stop);
  return stop;
}
