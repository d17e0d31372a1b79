// Events the node-loss handler leaves on each object it touches (or, in dry run, would touch), so `kubectl describe` tells why.
import { randomBytes } from 'node:crypto';
import type { V1ObjectMeta } from '@kubernetes/client-node';
import type { KubeClient } from '../../../kube/kube-client.js';
import { CLUSTER_EVENT_NAMESPACE, eventBody } from '../../../kube/event-body.js';
import { describeApiError } from '../../../kube/kube-errors.js';
import { log } from '../../../util/log.js';

export interface Involved {
  apiVersion: string;
  kind: string;
  metadata?: V1ObjectMeta;
}

export class NodeLossEvents {
  constructor(private readonly kube: KubeClient, private readonly driverName: string, private readonly nodeId: string) {}

  /** Records one Event; a failure is logged, never fatal: the log line says the same. */
  async record(about: Involved, type: 'Normal' | 'Warning', reason: string, message: string): Promise<void> {
    const name = about.metadata?.name ?? '';
    const body = eventBody({
      name: `${name}.${randomBytes(8).toString('hex')}`,
      about: { apiVersion: about.apiVersion, kind: about.kind, name, ...(about.metadata?.namespace ? { namespace: about.metadata.namespace } : {}), ...(about.metadata?.uid ? { uid: about.metadata.uid } : {}) },
      type, reason, message, component: `${this.driverName}/node-loss`, host: this.nodeId, at: new Date(),
    });
    const namespace = body.metadata?.namespace ?? CLUSTER_EVENT_NAMESPACE;
    try {
      await this.kube.bounded(`create event for ${about.kind} ${name}`, (a) => a.core.createNamespacedEvent({ namespace, body }));
    } catch (err) {
      log('warn', 'node loss: could not record an event', { kind: about.kind, name, reason, error: describeApiError(err, 'create event') });
    }
  }
}
