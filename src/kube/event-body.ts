// The core/v1 Event the driver writes about an object, in the form kubelet's and the controllers' recorders give theirs.
import type { CoreV1Event } from '@kubernetes/client-node';

/** Events of cluster-scoped objects (Node, PV) live here, as upstream recorders put them. */
export const CLUSTER_EVENT_NAMESPACE = 'default';

export interface EventAbout {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
  uid?: string;
}

export interface EventFields {
  name: string;
  about: EventAbout;
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
  /** The writer's component (source.component, reportingComponent). */
  component: string;
  /** This node (source.host, reportingInstance). */
  host: string;
  at: Date;
}

/** A new Event (count 1) in the object's namespace, or the cluster one for a cluster-scoped object. */
export function eventBody(f: EventFields): CoreV1Event {
  const namespace = f.about.namespace || CLUSTER_EVENT_NAMESPACE;
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: f.name, namespace },
    involvedObject: {
      apiVersion: f.about.apiVersion, kind: f.about.kind, name: f.about.name,
      ...(f.about.namespace ? { namespace: f.about.namespace } : {}),
      ...(f.about.uid ? { uid: f.about.uid } : {}),
    },
    type: f.type, reason: f.reason, message: f.message,
    source: { component: f.component, host: f.host },
    reportingComponent: f.component,
    reportingInstance: f.host,
    firstTimestamp: f.at, lastTimestamp: f.at, count: 1,
  };
}
