// Why a kind is refused, and what to write instead: workload controllers the bench does not run, and kinds it does not serve at all.
import { KINDS, MODELLED_KINDS } from '../api/resources.js';

/** Workload kinds whose controllers the bench does not run, with what to use instead. */
const WORKLOADS: Record<string, string> = {
  Deployment: 'write the pod template as a Pod (one per replica), or use a StatefulSet',
  ReplicaSet: 'write the pod template as a Pod (one per replica), or use a StatefulSet',
  ReplicationController: 'write the pod template as a Pod (one per replica), or use a StatefulSet',
  DaemonSet: 'write one Pod per node with spec.nodeName set to that node',
  Job: 'write the pod template as a Pod with restartPolicy Never or OnFailure (the bench has no containers, so it never completes)',
  CronJob: 'write the job\'s pod template as a Pod; the bench has no schedule to run it on',
};

export function refusedKindMessage(kind: string, apiVersion: string): string {
  const instead = WORKLOADS[kind];
  if (instead !== undefined) {
    return `kind: ${kind} is not modelled: the bench runs no ${kind} controller, so its pods would never exist; it models pods and StatefulSets: ${instead}`;
  }
  return `kind: ${kind} (${apiVersion || 'no apiVersion'}) is not a kind the bench serves; it acts on ${MODELLED_KINDS.join(', ')} and stores ${KINDS.filter((k) => !(MODELLED_KINDS as string[]).includes(k)).join(', ')} without acting on them (custom resources are not served)`;
}
