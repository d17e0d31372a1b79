// Kubernetes Events as the bench records them: who, why, what, at which virtual instant.

export type EventType = 'Normal' | 'Warning';

export interface BenchEvent {
  /** Position in the run, from 1. */
  seq: number;
  /** Virtual milliseconds since the start. */
  timeMs: number;
  type: EventType;
  reason: string;
  /** "Pod", "PersistentVolumeClaim", ... */
  kind: string;
  namespace: string | undefined;
  name: string;
  /** The object's uid when the recorder had the object itself (not only its key). */
  uid?: string;
  message: string;
  /** Reporting component, e.g. "default-scheduler", "kubelet/node-a". */
  source: string;
}

export type EventListener = (e: BenchEvent) => void;

/** The run's event list, in the order events were recorded. */
export class EventLog {
  readonly events: BenchEvent[] = [];
  private readonly listeners: EventListener[] = [];

  constructor(private readonly now: () => number) {}

  onEvent(l: EventListener): void {
    this.listeners.push(l);
  }

  record(source: string, obj: { kind?: string; metadata?: { name?: string; namespace?: string; uid?: string } }, type: EventType, reason: string, message: string): void {
    const e: BenchEvent = {
      seq: this.events.length + 1,
      timeMs: this.now(),
      type,
      reason,
      kind: obj.kind ?? '?',
      namespace: obj.metadata?.namespace,
      name: obj.metadata?.name ?? '?',
      ...(obj.metadata?.uid === undefined ? {} : { uid: obj.metadata.uid }),
      message,
      source,
    };
    this.events.push(e);
    for (const l of this.listeners) l(e);
  }
}
