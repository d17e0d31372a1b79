// The event log as core/v1 Events: named and folded as client-go's recorder does, found by kubectl describe's field selector.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventLog } from '../../../src/bench/api/event-log.js';
import { EventObjects, eventObjects } from '../../../src/bench/apiserver/event-objects.js';
import { UnsupportedFieldError, fieldsMatch, parseFieldSelector } from '../../../src/bench/apiserver/field-selector.js';

/** The server's own field selector, as it applies to served Events. */
const eventMatchesFieldSelector = (ev: unknown, selector: string): boolean => fieldsMatch('Event', parseFieldSelector('Event', selector), ev);
import { toTable } from '../../../src/bench/apiserver/tables/table.js';
import { VIRTUAL_EPOCH_MS } from '../../../src/bench/clock/virtual-clock.js';

function logAt(times: number[]): EventLog {
  let i = 0;
  return new EventLog(() => times[Math.min(i++, times.length - 1)]!);
}

const pod = { kind: 'Pod', metadata: { name: 'db-0', namespace: 'shop', uid: '0000b000-0000-4000-8000-000000000007' } };

test('the event log keeps the uid of the object an event is about', () => {
  const log = logAt([0]);
  log.record('default-scheduler', pod, 'Normal', 'Scheduled', 'Successfully assigned shop/db-0 to worker-a');
  assert.equal(log.events[0]!.uid, pod.metadata.uid);
});

test('an event names its object with kind, namespace, name, uid and apiVersion, and sits in the object\'s namespace', () => {
  const log = logAt([90_000]);
  log.record('kubelet/worker-a', pod, 'Warning', 'FailedMount', 'MountVolume.SetUp failed');
  const [ev] = eventObjects(log);
  assert.deepEqual(ev!.involvedObject, { kind: 'Pod', namespace: 'shop', name: 'db-0', uid: pod.metadata.uid, apiVersion: 'v1' });
  assert.equal(ev!.metadata.namespace, 'shop');
  // client-go's name: the object's name, a dot, the event time in Unix nanoseconds as hex.
  const nanos = BigInt(VIRTUAL_EPOCH_MS + 90_000) * 1_000_000n + 1n;
  assert.equal(ev!.metadata.name, `db-0.${nanos.toString(16)}`);
  assert.deepEqual(ev!.source, { component: 'kubelet', host: 'worker-a' });
  assert.equal(ev!.reportingComponent, 'kubelet');
  assert.equal(ev!.reportingInstance, 'worker-a');
  assert.equal(ev!.firstTimestamp.toISOString(), '2026-01-01T00:01:30.000Z', 'a virtual Date: the API shifts it on the wire');
  assert.equal(ev!.eventTime, null);
  assert.equal(ev!.type, 'Warning');
});

test('repeats of the same event fold into one with a count and the last time; events about cluster-scoped objects go to default', () => {
  const log = logAt([1000, 5000, 9000, 9000]);
  const pv = { kind: 'PersistentVolume', metadata: { name: 'pvc-1', uid: 'u-pv' } };
  log.record('persistentvolume-controller', pv, 'Warning', 'VolumeFailedDelete', 'rpc error');
  log.record('persistentvolume-controller', pv, 'Warning', 'VolumeFailedDelete', 'rpc error');
  log.record('persistentvolume-controller', pv, 'Warning', 'VolumeFailedDelete', 'another error');
  log.record('bench', { kind: 'Scenario', metadata: { name: 'half way' } }, 'Normal', 'Mark', 'half way');
  const evs = eventObjects(log);
  assert.equal(evs.length, 2, 'the scenario mark is not an API object and makes no Event');
  assert.equal(evs[0]!.count, 2);
  assert.equal(evs[0]!.firstTimestamp.toISOString(), '2026-01-01T00:00:01.000Z');
  assert.equal(evs[0]!.lastTimestamp.toISOString(), '2026-01-01T00:00:05.000Z');
  assert.equal(evs[0]!.metadata.namespace, 'default');
  assert.equal(evs[0]!.involvedObject.namespace, undefined);
  assert.equal(evs[1]!.count, 1);
  assert.notEqual(evs[0]!.metadata.name, evs[1]!.metadata.name);
});

test('fed one at a time, a repeat is a MODIFIED of the first Event, for a server that keeps them current', () => {
  const log = logAt([0, 1000]);
  const objs = new EventObjects();
  const changes: string[] = [];
  log.onEvent((e) => { const c = objs.add(e); if (c) changes.push(`${c.type} ${c.object.metadata.name} x${c.object.count}`); });
  log.record('default-scheduler', pod, 'Warning', 'FailedScheduling', '0/3 nodes are available');
  log.record('default-scheduler', pod, 'Warning', 'FailedScheduling', '0/3 nodes are available');
  assert.equal(changes.length, 2);
  assert.match(changes[0]!, /^ADDED db-0\.[0-9a-f]+ x1$/);
  assert.equal(changes[1], changes[0]!.replace('ADDED', 'MODIFIED').replace('x1', 'x2'));
});

test('kubectl describe\'s field selector finds the pod\'s events and no others; an unknown field is refused', () => {
  const log = logAt([0]);
  log.record('default-scheduler', pod, 'Normal', 'Scheduled', 'assigned');
  log.record('default-scheduler', { kind: 'Pod', metadata: { name: 'db-1', namespace: 'shop', uid: 'other' } }, 'Normal', 'Scheduled', 'assigned');
  const [mine, other] = eventObjects(log);
  const describe = `involvedObject.name=db-0,involvedObject.namespace=shop,involvedObject.uid=${pod.metadata.uid}`;
  assert.equal(eventMatchesFieldSelector(mine!, describe), true);
  assert.equal(eventMatchesFieldSelector(other!, describe), false);
  assert.equal(eventMatchesFieldSelector(mine!, 'type!=Normal'), false);
  assert.equal(eventMatchesFieldSelector(mine!, 'involvedObject.kind==Pod,reason=Scheduled,source=default-scheduler'), true);
  assert.equal(eventMatchesFieldSelector(mine!, ''), true);
  assert.throws(() => eventMatchesFieldSelector(mine!, 'spec.nodeName=x'), (e: unknown) => e instanceof UnsupportedFieldError && e.message === 'field label not supported: spec.nodeName');
});

test('kubectl get events reads LAST SEEN, TYPE, REASON, OBJECT as kind/name and MESSAGE from them', () => {
  const log = logAt([0, 60_000]);
  log.record('kubelet/worker-a', pod, 'Normal', 'Started', 'Started: volumes mounted');
  log.record('kubelet/worker-a', pod, 'Normal', 'Started', 'Started: volumes mounted');
  const now = new Date(VIRTUAL_EPOCH_MS + 180_000);
  const t = toTable('Event', eventObjects(log) as unknown as Record<string, unknown>[], { now, includeObject: 'None', resourceVersion: '9' });
  const cells = (t['rows'] as { cells: unknown[] }[])[0]!.cells;
  assert.deepEqual(cells.slice(0, 10), ['2m', 'Normal', 'Started', 'pod/db-0', '', 'kubelet, worker-a', 'Started: volumes mounted', '3m', 2, cells[9]]);
  assert.match(String(cells[9]), /^db-0\./);
});
