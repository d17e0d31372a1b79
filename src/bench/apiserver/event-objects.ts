// The bench's event log as core/v1 Event objects: what `kubectl describe` and `kubectl get events` read from a cluster.
import type { BenchEvent, EventLog } from '../api/event-log.js';
import { resourceForKind } from '../api/resources.js';
import { VIRTUAL_EPOCH_MS } from '../clock/virtual-clock.js';

export interface CoreEvent {
  apiVersion: 'v1';
  kind: 'Event';
  /** Times are Dates until the wire, where the clock's display shift moves them as it moves every object's. */
  metadata: { name: string; namespace: string; creationTimestamp: Date };
  involvedObject: { kind: string; namespace?: string; name: string; uid?: string; apiVersion?: string };
  reason: string;
  message: string;
  type: string;
  source: { component: string; host?: string };
  firstTimestamp: Date;
  lastTimestamp: Date;
  /** Unset, as client-go's core/v1 recorder leaves it: FIRST SEEN comes from firstTimestamp. */
  eventTime: null;
  count: number;
  reportingComponent: string;
  reportingInstance: string;
}


/**
 * `kubelet/<node>` is the bench's name for a node's kubelet; on a cluster that is component
 * "kubelet" on host "<node>". Other sources are already a component name.
 */
function splitSource(source: string): { component: string; host?: string } {
  const m = /^kubelet\/(.+)$/.exec(source);
  return m === null ? { component: source } : { component: 'kubelet', host: m[1]! };
}

/**
 * client-go names an event `<object name>.<event time in Unix nanoseconds, hex>`. Virtual
 * time has millisecond steps and several events share an instant, so the event's position
 * in the run fills the nanoseconds: names stay unique and the same on every run (they use
 * the unshifted time, so a display shift re-set at hold start renames nothing).
 */
function eventName(e: BenchEvent, epochMs: number): string {
  const nanos = BigInt(epochMs + e.timeMs) * 1_000_000n + BigInt(e.seq % 1_000_000);
  return `${e.name}.${nanos.toString(16)}`;
}

/** What client-go's event correlator treats as the same event: repeats raise its count instead of making a new one. */
function foldKey(e: BenchEvent): string {
  return JSON.stringify([e.source, e.kind, e.namespace ?? '', e.name, e.uid ?? '', e.type, e.reason, e.message]);
}

export type EventChange = { type: 'ADDED' | 'MODIFIED'; object: CoreEvent };

/**
 * Turns bench events into Event objects one at a time, folding repeats as a recorder does
 * (count, lastTimestamp), so a server can keep a store of them current from EventLog.onEvent.
 * Events about things that are not API objects (the scenario's marks) have no Event.
 * `epochMs` is the wall-clock instant of virtual time 0.
 */
export class EventObjects {
  private readonly byKey = new Map<string, CoreEvent>();
  private readonly ordered: CoreEvent[] = [];

  constructor(private readonly epochMs: number = VIRTUAL_EPOCH_MS) {}

  add(e: BenchEvent): EventChange | undefined {
    const resource = resourceForKind(e.kind);
    if (resource === undefined) return undefined;
    const at = new Date(this.epochMs + e.timeMs);
    const key = foldKey(e);
    const seen = this.byKey.get(key);
    if (seen !== undefined) {
      seen.count++;
      seen.lastTimestamp = at;
      return { type: 'MODIFIED', object: structuredClone(seen) };
    }
    const source = splitSource(e.source);
    const ev: CoreEvent = {
      apiVersion: 'v1',
      kind: 'Event',
      // Events about cluster-scoped objects live in "default", as the recorder puts them.
      metadata: { name: eventName(e, this.epochMs), namespace: e.namespace ?? 'default', creationTimestamp: at },
      involvedObject: {
        kind: e.kind,
        ...(resource.namespaced && e.namespace !== undefined ? { namespace: e.namespace } : {}),
        name: e.name,
        ...(e.uid === undefined ? {} : { uid: e.uid }),
        apiVersion: resource.apiVersion,
      },
      reason: e.reason,
      message: e.message,
      type: e.type,
      source,
      firstTimestamp: at,
      lastTimestamp: at,
      eventTime: null,
      count: 1,
      reportingComponent: source.component,
      reportingInstance: source.host ?? '',
    };
    this.byKey.set(key, ev);
    this.ordered.push(ev);
    return { type: 'ADDED', object: structuredClone(ev) };
  }

  /** Every Event so far, in the order they were first recorded. */
  all(): CoreEvent[] {
    return this.ordered.map((e) => structuredClone(e));
  }
}

/** The whole log (or a slice of it) as Event objects. */
export function eventObjects(log: EventLog | readonly BenchEvent[], epochMs: number = VIRTUAL_EPOCH_MS): CoreEvent[] {
  const out = new EventObjects(epochMs);
  for (const e of Array.isArray(log) ? log : (log as EventLog).events) out.add(e);
  return out.all();
}
