// The run's event log served as core/v1 Events beside the stored ones: listed, got, and fed to open watches as they are recorded.
import type { AnyObject } from '../api/kinds.js';
import type { EventLog } from '../api/event-log.js';
import type { ObjectStore } from '../api/object-store.js';
import { EventObjects, type CoreEvent } from './event-objects.js';
import type { WatchHistory } from './watch-history.js';

/**
 * Events live outside the store on purpose: stored, each would take a uid and a
 * resourceVersion from the store's counters, and a run with --api would name its volumes
 * differently from the same run without. They carry the store's resourceVersion at the
 * moment they were recorded (or folded), and enter the watch history like a change.
 */
export class ServedEvents {
  private readonly objects = new EventObjects();
  private readonly byName = new Map<string, AnyObject>();
  private served = 0;

  constructor(log: EventLog, private readonly store: ObjectStore, private readonly history: WatchHistory) {
    for (const e of log.events) this.take(this.objects.add(e)?.object, false);
    log.onEvent((e) => {
      const change = this.objects.add(e);
      if (change !== undefined) this.take(change.object, true);
    });
  }

  private take(ev: CoreEvent | undefined, live: boolean): void {
    if (ev === undefined) return;
    const key = `${ev.metadata.namespace}/${ev.metadata.name}`;
    const old = this.byName.get(key);
    const rv = this.store.resourceVersion;
    // Uids of their own (variant digit 9), never one the store could hand out.
    const uid = old?.metadata?.uid ?? `00000000-0000-4000-9000-${(++this.served).toString(16).padStart(12, '0')}`;
    const object = { ...ev, metadata: { ...ev.metadata, uid, resourceVersion: rv } } as unknown as AnyObject;
    this.byName.set(key, object);
    if (live) this.history.record({ rv: Number(rv), type: old === undefined ? 'ADDED' : 'MODIFIED', kind: 'Event', object, old });
  }

  /** Every served Event, sorted by namespace and name as store lists are. */
  list(): AnyObject[] {
    return [...this.byName.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, o]) => structuredClone(o));
  }

  get(name: string, namespace: string | undefined): AnyObject | undefined {
    const o = this.byName.get(`${namespace ?? 'default'}/${name}`);
    return o === undefined ? undefined : structuredClone(o);
  }
}
