// A bounded history of every store change, so a watch can resume from a resourceVersion, and a feed of new ones to open watches.
import { type AnyObject, type Kind } from '../api/kinds.js';
import { KINDS } from '../api/resources.js';
import type { ObjectStore, WatchType } from '../api/object-store.js';

export interface Change {
  rv: number;
  type: WatchType;
  kind: Kind;
  /** After the change; the last state for DELETED. Shared: read only. */
  object: AnyObject;
  /** Before the change (undefined for ADDED): a watch with a selector needs it to tell an object leaving the selection. */
  old: AnyObject | undefined;
}

export type ChangeListener = (c: Change) => void;

/** Changes kept for resuming watches: a client further behind gets 410 Expired and relists, as after an etcd compaction. */
export const DEFAULT_HISTORY = 5_000;

export class WatchHistory {
  private readonly changes: Change[] = [];
  /** The resourceVersion of the newest change dropped from the history (0: none dropped). */
  private droppedThrough = 0;
  private readonly listeners = new Set<ChangeListener>();

  constructor(store: ObjectStore, private readonly limit = DEFAULT_HISTORY) {
    for (const kind of KINDS) {
      store.watch(kind, (e) => this.record({ rv: Number(e.object.metadata?.resourceVersion ?? 0), type: e.type, kind, object: e.object, old: e.old }));
    }
  }

  /** Keeps a change and tells open watches (also for objects served beside the store, such as Events). */
  record(c: Change): void {
    this.changes.push(c);
    if (this.changes.length > this.limit) this.droppedThrough = this.changes.splice(0, this.changes.length - this.limit).at(-1)!.rv;
    for (const l of this.listeners) l(c);
  }

  /** The oldest resourceVersion a watch can still resume from (changes after it are all kept). */
  get oldestResumable(): number {
    return this.droppedThrough;
  }

  /** Changes after `rv`, or undefined when some of them are no longer kept. */
  since(rv: number): Change[] | undefined {
    if (rv < this.droppedThrough) return undefined;
    // Binary search: changes are in resourceVersion order.
    let lo = 0;
    let hi = this.changes.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.changes[mid]!.rv <= rv) lo = mid + 1;
      else hi = mid;
    }
    return this.changes.slice(lo);
  }

  subscribe(l: ChangeListener): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }
}
