// The pod table: READY from container statuses, STATUS by the printer's reason rules (Init:, Terminating, ...).
import { column, ageOf, nameOf, NAME_COLUMN, AGE_COLUMN, type Printer, type RowCondition } from './printer.js';
import { at, bool, isRecord, list, num, str, type Json } from './fields.js';
import { ageSince, timestampMs } from './human-duration.js';

const COLUMNS = [
  NAME_COLUMN,
  column('Ready', 'string', 'Ready containers out of all containers.'),
  column('Status', 'string', 'Summary of the pod phase and its containers\' states.'),
  column('Restarts', 'string', 'Container restarts, and how long ago the last one was.'),
  AGE_COLUMN,
  column('IP', 'string', 'The pod\'s first IP address.', 1),
  column('Node', 'string', 'The node the pod is bound to.', 1),
  column('Nominated Node', 'string', 'The node a preempting scheduler nominated for the pod.', 1),
  column('Readiness Gates', 'string', 'Readiness gates whose condition is true, out of all.', 1),
];

function restartable(container: unknown): boolean {
  return str(container, 'restartPolicy') === 'Always';
}

function hasCondition(pod: Json, type: string): boolean {
  return list(pod, 'status', 'conditions').some((c) => str(c, 'type') === type && str(c, 'status') === 'True');
}

/** Later of `current` and the time the container last terminated. */
function lastTermination(current: number, status: unknown): number {
  const t = timestampMs(at(status, 'lastState', 'terminated', 'finishedAt'));
  return t !== undefined && t > current ? t : current;
}

function terminatedText(prefix: string, terminated: unknown): string {
  const signal = num(terminated, 'signal');
  return signal !== 0 ? `${prefix}Signal:${signal}` : `${prefix}ExitCode:${num(terminated, 'exitCode')}`;
}

function podRow(pod: Json, now: Date): { cells: unknown[]; conditions?: RowCondition[] } {
  const phase = str(pod, 'status', 'phase');
  let reason = str(pod, 'status', 'reason') || phase;
  if (list(pod, 'status', 'conditions').some((c) => str(c, 'type') === 'PodScheduled' && str(c, 'reason') === 'SchedulingGated')) reason = 'SchedulingGated';

  const specInit = list(pod, 'spec', 'initContainers');
  const initByName = new Map(specInit.map((c) => [str(c, 'name'), c]));
  const total = list(pod, 'spec', 'containers').length + specInit.filter(restartable).length;
  let ready = 0;
  let restarts = 0;
  let restartableRestarts = 0;
  let lastRestart = 0;
  let lastRestartableRestart = 0;

  let initializing = false;
  const initStatuses = list(pod, 'status', 'initContainerStatuses');
  for (let i = 0; i < initStatuses.length; i++) {
    const c = initStatuses[i];
    const isRestartable = restartable(initByName.get(str(c, 'name')));
    restarts += num(c, 'restartCount');
    lastRestart = lastTermination(lastRestart, c);
    if (isRestartable) {
      restartableRestarts += num(c, 'restartCount');
      lastRestartableRestart = lastTermination(lastRestartableRestart, c);
    }
    const terminated = at(c, 'state', 'terminated');
    const waitingReason = str(c, 'state', 'waiting', 'reason');
    if (isRecord(terminated) && num(terminated, 'exitCode') === 0) continue;
    if (isRestartable && bool(c, false, 'started')) {
      if (bool(c, false, 'ready')) ready++;
      continue;
    }
    if (isRecord(terminated)) {
      const r = str(terminated, 'reason');
      reason = r === '' ? terminatedText('Init:', terminated) : `Init:${r}`;
    } else if (waitingReason !== '' && waitingReason !== 'PodInitializing') {
      reason = `Init:${waitingReason}`;
    } else {
      reason = `Init:${i}/${specInit.length}`;
    }
    initializing = true;
    break;
  }

  if (!initializing || hasCondition(pod, 'Initialized')) {
    restarts = restartableRestarts;
    lastRestart = lastRestartableRestart;
    let hasRunning = false;
    const statuses = list(pod, 'status', 'containerStatuses');
    // Last to first, so the first container's state wins the STATUS column, as upstream.
    for (let i = statuses.length - 1; i >= 0; i--) {
      const c = statuses[i];
      restarts += num(c, 'restartCount');
      lastRestart = lastTermination(lastRestart, c);
      const waitingReason = str(c, 'state', 'waiting', 'reason');
      const terminated = at(c, 'state', 'terminated');
      if (waitingReason !== '') reason = waitingReason;
      else if (isRecord(terminated) && str(terminated, 'reason') !== '') reason = str(terminated, 'reason');
      else if (isRecord(terminated)) reason = terminatedText('', terminated);
      else if (bool(c, false, 'ready') && isRecord(at(c, 'state', 'running'))) {
        hasRunning = true;
        ready++;
      }
    }
    if (reason === 'Completed' && hasRunning) reason = hasCondition(pod, 'Ready') ? 'Running' : 'NotReady';
  }

  const deleting = at(pod, 'metadata', 'deletionTimestamp') !== undefined && at(pod, 'metadata', 'deletionTimestamp') !== null;
  if (deleting && str(pod, 'status', 'reason') === 'NodeLost') reason = 'Unknown';
  else if (deleting && phase !== 'Succeeded' && phase !== 'Failed') reason = 'Terminating';

  const restartsText = restarts !== 0 && lastRestart !== 0 ? `${restarts} (${ageSince(new Date(lastRestart), now)} ago)` : String(restarts);

  const gates = list(pod, 'spec', 'readinessGates');
  let readinessGates = '<none>';
  if (gates.length > 0) {
    const conditions = list(pod, 'status', 'conditions');
    const trueGates = gates.filter((g) => {
      const c = conditions.find((x) => str(x, 'type') === str(g, 'conditionType'));
      return c !== undefined && str(c, 'status') === 'True';
    }).length;
    readinessGates = `${trueGates}/${gates.length}`;
  }
  const podIP = str(list(pod, 'status', 'podIPs')[0], 'ip') || '<none>';
  const cells = [
    nameOf(pod), `${ready}/${total}`, reason, restartsText, ageOf(pod, now),
    podIP, str(pod, 'spec', 'nodeName') || '<none>', str(pod, 'status', 'nominatedNodeName') || '<none>', readinessGates,
  ];
  if (phase === 'Succeeded') return { cells, conditions: [{ type: 'Completed', status: 'True', reason: 'Succeeded', message: 'The pod has completed successfully.' }] };
  if (phase === 'Failed') return { cells, conditions: [{ type: 'Completed', status: 'True', reason: 'Failed', message: 'The pod failed.' }] };
  return { cells };
}

export const POD_PRINTER: Printer = { columns: COLUMNS, row: podRow };

