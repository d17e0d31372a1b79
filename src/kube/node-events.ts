// Events on this node's Node object, one per subject: created once, then only refreshed so they outlive the API server's event TTL.
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
}

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
   * Makes sure an Event says `message` about `subject`: creates it the first time, and
   * afterwards only moves its lastTimestamp, at most every EVENT_REFRESH_MS. Returns false
   * when the API did not take it (the caller tries again next round); never throws.
   */
  async report(type: EventType, reason: string, subject: string, message: string, nowMs = Date.now()): Promise<boolean> {
    const key = `${reason}\0${subject}`;
    const seen = this.written.get(key);
    if (seen !== undefined && nowMs - seen.lastWrittenMs < EVENT_REFRESH_MS) return true;
    const name = seen?.name ?? this.nameFor(reason, subject);
    try {
      if (seen !== undefined && await this.touch(name, nowMs)) {
        seen.lastWrittenMs = nowMs;
        return true;
      }
      await this.create(name, type, reason, message, nowMs);
    } catch (err) {
      log('warn', 'could not write an Event on the Node', { reason, subject, error: describeApiError(err, `create event ${EVENT_NAMESPACE}/${name}`) });
      return false;
    }
    this.written.set(key, { name, lastWrittenMs: nowMs });
    return true;
  }

  /** Moves an existing Event's lastTimestamp; false when it is gone (its TTL ran out). */
  private async touch(name: string, nowMs: number): Promise<boolean> {
    try {
      await this.kube.bounded(`patch event ${EVENT_NAMESPACE}/${name}`, (a) => a.core.patchNamespacedEvent({
        name, namespace: EVENT_NAMESPACE, body: [{ op: 'replace', path: '/lastTimestamp', value: new Date(nowMs).toISOString() }],
      }));
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  private async create(name: string, type: EventType, reason: string, message: string, nowMs: number): Promise<void> {
    const at = new Date(nowMs);
    try {
      await this.kube.bounded(`create event ${EVENT_NAMESPACE}/${name}`, (a) => a.core.createNamespacedEvent({
        namespace: EVENT_NAMESPACE,
        // The node's name as its uid, as kubelet's own Events on the Node carry it: kubectl
        // describe node looks for both that and the Node's real uid.
        body: eventBody({ name, about: { apiVersion: 'v1', kind: 'Node', name: this.nodeId, uid: this.nodeId }, type, reason, message, component: EVENT_COMPONENT, host: this.nodeId, at }),
      }));
    } catch (err) {
      // Written by an earlier run of this driver: the same subject, so refresh it instead.
      if (isConflict(err) && await this.touch(name, nowMs)) return;
      throw err;
    }
  }
}
