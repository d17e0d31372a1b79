// Events on this node's Node object, one per subject: created once, then repeats counted (count, lastTimestamp) as the upstream recorder counts them, often enough to outlive the event TTL.
import { createHash } from 'node:crypto';
import { CLUSTER_EVENT_NAMESPACE, eventBody } from './event-body.js';
import type { KubeClient } from './kube-client.js';
import { describeApiError, isConflict, isNotFound } from './kube-errors.js';
import { log } from '../util/log.js';

/** Events of cluster-scoped objects live here, as the recorders of kubelet and the controllers put them. */
export const EVENT_NAMESPACE = CLUSTER_EVENT_NAMESPACE;

/** The component named as the Events' source. */
export const EVENT_COMPONENT = 'lode-driver';

/**
 * kube-apiserver drops an Event an hour (--event-ttl) after its last write: a subject still
 * true is written again within that, and no more often.
 */
export const EVENT_REFRESH_MS = 30 * 60_000;

export type EventType = 'Normal' | 'Warning';

interface Written {
  name: string;
  lastWrittenMs: number;
  /** What the Event says now, and how many times it has been written saying it. */
  message: string;
  count: number;
  firstMs: number;
}

/**
 * The Events this node's driver keeps on its own Node, one per (reason, subject). A repeat is
 * written as the upstream event recorder writes one: the same Event (object, reason, message,
 * source) gets its `count` raised by one and its `lastTimestamp` moved, `firstTimestamp`
 * staying; a new message starts the count again. Repeats are written at most every
 * EVENT_REFRESH_MS, as the recorder's spam filter lets one through every few minutes.
 */
export class NodeEvents {
  private readonly written = new Map<string, Written>();

  constructor(private readonly kube: KubeClient, private readonly nodeId: string) {}

  /**
   * The Event's name follows from node, reason and subject, so a restarted driver finds the
   * one it wrote before (a create answered 409) instead of adding a second.
   */
  private nameFor(reason: string, subject: string): string {
    const hash = createHash('sha256').update(`${this.nodeId}\0${reason}\0${subject}`).digest('hex').slice(0, 32);
    return `lode-${reason.toLowerCase()}-${hash}`;
  }

  /**
   * Makes sure an Event says `message` about `subject`: creates it the first time; afterwards
   * counts the repeat (at most every EVENT_REFRESH_MS, or at once when the message changed).
   * Returns false when the API did not take it (the caller tries again next round); never throws.
   */
  async report(type: EventType, reason: string, subject: string, message: string, nowMs = Date.now()): Promise<boolean> {
    const key = `${reason}\0${subject}`;
    const seen = this.written.get(key);
    if (seen !== undefined && seen.message === message && nowMs - seen.lastWrittenMs < EVENT_REFRESH_MS) return true;
    const name = seen?.name ?? this.nameFor(reason, subject);
    try {
      if (seen !== undefined && await this.repeat(name, seen, message, nowMs)) return true;
      const made = await this.create(name, type, reason, message, nowMs);
      this.written.set(key, made);
    } catch (err) {
      log('warn', 'could not write an Event on the Node', { reason, subject, error: describeApiError(err, `write event ${EVENT_NAMESPACE}/${name}`) });
      return false;
    }
    return true;
  }

  /**
   * Writes a repeat of a known Event: count + 1 and a new lastTimestamp for the same message,
   * count 1 and both timestamps for a new one. False when it is gone (its TTL ran out).
   */
  private async repeat(name: string, w: Written, message: string, nowMs: number): Promise<boolean> {
    const at = new Date(nowMs).toISOString();
    const same = w.message === message;
    const count = same ? w.count + 1 : 1;
    const ops: object[] = [
      { op: 'replace', path: '/count', value: count },
      { op: 'replace', path: '/lastTimestamp', value: at },
      ...(same ? [] : [{ op: 'replace', path: '/message', value: message }, { op: 'replace', path: '/firstTimestamp', value: at }]),
    ];
    try {
      await this.kube.bounded(`patch event ${EVENT_NAMESPACE}/${name}`, (a) => a.core.patchNamespacedEvent({ name, namespace: EVENT_NAMESPACE, body: ops }));
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
    w.count = count;
    w.lastWrittenMs = nowMs;
    if (!same) {
      w.message = message;
      w.firstMs = nowMs;
    }
    return true;
  }

  private async create(name: string, type: EventType, reason: string, message: string, nowMs: number): Promise<Written> {
    const at = new Date(nowMs);
    try {
      await this.kube.bounded(`create event ${EVENT_NAMESPACE}/${name}`, (a) => a.core.createNamespacedEvent({
        namespace: EVENT_NAMESPACE,
        // The node's name as its uid, as kubelet's own Events on the Node carry it: kubectl
        // describe node looks for both that and the Node's real uid.
        body: eventBody({ name, about: { apiVersion: 'v1', kind: 'Node', name: this.nodeId, uid: this.nodeId }, type, reason, message, component: EVENT_COMPONENT, host: this.nodeId, at }),
      }));
      return { name, lastWrittenMs: nowMs, message, count: 1, firstMs: nowMs };
    } catch (err) {
      if (!isConflict(err)) throw err;
    }
    // Written by an earlier run of this driver (the same subject): read where its count
    // stands, and write this as its repeat.
    const there = await this.kube.bounded(`get event ${EVENT_NAMESPACE}/${name}`, (a) => a.core.readNamespacedEvent({ name, namespace: EVENT_NAMESPACE }));
    const w: Written = { name, lastWrittenMs: 0, message: there.message ?? '', count: there.count ?? 1, firstMs: there.firstTimestamp?.getTime() ?? nowMs };
    if (!(await this.repeat(name, w, message, nowMs))) throw new Error(`event ${EVENT_NAMESPACE}/${name} went while it was being written`);
    return w;
  }
}
