// The core/v1 Event table: LAST SEEN, TYPE, REASON, OBJECT, MESSAGE; source, first seen, count and name with -o wide.
import { column, type Printer } from './printer.js';
import { at, isRecord, num, str } from './fields.js';
import { ageSince, timestampMs } from './human-duration.js';

const COLUMNS = [
  column('Last Seen', 'string', 'Time since the event was last seen.'),
  column('Type', 'string', 'Normal or Warning.'),
  column('Reason', 'string', 'Why the event happened, in one CamelCase word.'),
  column('Object', 'string', 'The object the event is about, as kind/name.'),
  column('Subobject', 'string', 'The part of the object the event is about.', 1),
  column('Source', 'string', 'The component that reported the event.', 1),
  column('Message', 'string', 'What happened.'),
  column('First Seen', 'string', 'Time since the event was first seen.', 1),
  column('Count', 'string', 'How many times the event happened.', 1),
  column('Name', 'string', 'The event object\'s name.', 1, 'name'),
];

function set(v: unknown): boolean {
  return timestampMs(v) !== undefined;
}

export const EVENT_PRINTER: Printer = {
  columns: COLUMNS,
  row(ev, now) {
    const firstSeen = set(at(ev, 'firstTimestamp')) ? ageSince(at(ev, 'firstTimestamp'), now) : ageSince(at(ev, 'eventTime'), now);
    let lastSeen = set(at(ev, 'lastTimestamp')) ? ageSince(at(ev, 'lastTimestamp'), now) : firstSeen;
    let count = num(ev, 'count');
    const series = at(ev, 'series');
    if (isRecord(series)) {
      lastSeen = ageSince(series['lastObservedTime'], now);
      count = num(series, 'count');
    } else if (count === 0) {
      // Events written through events.k8s.io leave count unset for a single occurrence.
      count = 1;
    }
    const kind = str(ev, 'involvedObject', 'kind').toLowerCase();
    const name = str(ev, 'involvedObject', 'name');
    const component = str(ev, 'source', 'component') || str(ev, 'reportingComponent');
    const instance = str(ev, 'source', 'host') || str(ev, 'reportingInstance');
    return {
      cells: [
        lastSeen, str(ev, 'type'), str(ev, 'reason'), name === '' ? kind : `${kind}/${name}`,
        str(ev, 'involvedObject', 'fieldPath'), instance === '' ? component : `${component}, ${instance}`,
        str(ev, 'message').trim(), firstSeen, count, str(ev, 'metadata', 'name'),
      ],
    };
  },
};
