// Formats events the way `kubectl get events` lists them: virtual time, type, reason, object, source, message.
import type { BenchEvent } from '../api/event-log.js';
import { formatDuration } from '../clock/virtual-clock.js';

const KIND_NAMES: Record<string, string> = {
  Pod: 'pod', PersistentVolumeClaim: 'persistentvolumeclaim', PersistentVolume: 'persistentvolume', Node: 'node',
  StatefulSet: 'statefulset', CSIStorageCapacity: 'csistoragecapacity', Scenario: 'scenario',
};

export function objectRef(e: BenchEvent): string {
  return `${KIND_NAMES[e.kind] ?? e.kind.toLowerCase()}/${e.name}`;
}

export const EVENT_HEADER = `${'TIME'.padEnd(8)} ${'TYPE'.padEnd(7)} ${'REASON'.padEnd(21)} ${'OBJECT'.padEnd(38)} ${'FROM'.padEnd(26)} MESSAGE`;

export function eventLine(e: BenchEvent): string {
  return `${('+' + formatDuration(e.timeMs)).padEnd(8)} ${e.type.padEnd(7)} ${e.reason.padEnd(21)} ${objectRef(e).padEnd(38)} ${e.source.padEnd(26)} ${e.message}`;
}

/** The log with consecutive repeats of the same (type, reason, object, message) folded into one line with a count, as kubectl does. */
export function foldedEventLines(events: BenchEvent[]): string[] {
  const out: string[] = [];
  let prev: BenchEvent | undefined;
  let count = 0;
  const flush = (): void => {
    if (prev !== undefined) out.push(eventLine(prev) + (count > 1 ? ` (x${count})` : ''));
  };
  for (const e of events) {
    if (prev !== undefined && prev.type === e.type && prev.reason === e.reason && prev.kind === e.kind && prev.name === e.name && prev.message === e.message) {
      count++;
      continue;
    }
    flush();
    prev = e;
    count = 1;
  }
  flush();
  return out;
}
