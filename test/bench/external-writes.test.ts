// Client writes enter between reconciles, those queued together in their clients' order; a held runtime follows wall time and applies them as they come.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { ObjectStore } from '../../src/bench/api/object-store.js';
import { VirtualClock } from '../../src/bench/clock/virtual-clock.js';
import { Runtime } from '../../src/bench/runtime/runtime.js';
import { Controller } from '../../src/bench/runtime/controller.js';
import { RunOverError } from '../../src/bench/runtime/external-writes.js';

/** A controller whose reconcile reads a claim, waits (as a driver call does), then reads it again. */
class SlowReader extends Controller {
  readonly seen: string[] = [];
  constructor(clock: VirtualClock, private readonly store: ObjectStore, private readonly during: () => void) {
    super('slow-reader', clock);
  }
  async reconcile(key: string): Promise<void> {
    const before = this.store.get('PersistentVolumeClaim', key, 'default')?.metadata?.labels?.step ?? '-';
    this.during();
    await sleep(20);
    const after = this.store.get('PersistentVolumeClaim', key, 'default')?.metadata?.labels?.step ?? '-';
    this.seen.push(`${key}:${before}->${after}`);
  }
}

describe('ExternalWrites', () => {
  it('holds a client write that arrives mid-reconcile until the reconcile returns, then lets watchers see it', async () => {
    const clock = new VirtualClock();
    const store = new ObjectStore(clock);
    const rt = new Runtime(clock);
    let submitted: Promise<unknown> | undefined;
    const reader = new SlowReader(clock, store, () => {
      submitted ??= rt.external.submit('label claim', () => store.modify('PersistentVolumeClaim', 'c', 'default', (o) => { o.metadata!.labels = { step: 'client' }; }));
    });
    rt.register(reader);
    store.watch('PersistentVolumeClaim', (e) => reader.enqueue(e.object.metadata!.name!));
    store.create('PersistentVolumeClaim', { metadata: { name: 'c' }, spec: {} });
    await rt.drain();
    await submitted;
    // The first reconcile saw no change under it; the client's write queued a second one, which saw it.
    assert.deepEqual(reader.seen, ['c:-->-', 'c:client->client']);
    assert.equal(rt.external.applied, 1);
  });

  it('applies writes queued together by their order (client, then request), whatever order they arrived in; ties keep arrival order', async () => {
    const applied: string[] = [];
    const run = async (arrivals: Array<[string, string]>): Promise<string[]> => {
      applied.length = 0;
      const rt = new Runtime(new VirtualClock());
      const done = arrivals.map(([label, order]) => rt.external.submit(label, () => applied.push(label), order));
      await rt.drain();
      await Promise.all(done);
      return [...applied];
    };
    // Two drivers starting side by side each post an Event: which request reaches the server first is chance.
    const node1 = 'lode-driver/0.1.0 (node-1)\0create\0events';
    const node2 = 'lode-driver/0.1.0 (node-2)\0create\0events';
    assert.deepEqual(await run([['node-2 event', node2], ['node-1 event', node1]]), ['node-1 event', 'node-2 event']);
    assert.deepEqual(await run([['node-1 event', node1], ['node-2 event', node2]]), ['node-1 event', 'node-2 event']);
    assert.deepEqual(await run([['first', 'same'], ['second', 'same'], ['third', 'same']]), ['first', 'second', 'third']);
  });

  it('passes a write that throws back to its client and refuses writes once closed', async () => {
    const clock = new VirtualClock();
    const rt = new Runtime(clock);
    const failing = rt.external.submit('bad', () => { throw new Error('no such claim'); });
    const ok = rt.external.submit('good', () => 42);
    await rt.drain();
    await assert.rejects(failing, /no such claim/);
    assert.equal(await ok, 42);
    const late = rt.external.submit('queued at close', () => 1);
    rt.external.close('the bench run is over');
    await assert.rejects(late, RunOverError);
    await assert.rejects(rt.external.submit('after', () => 1), /run is over/);
  });
});

describe('Runtime.hold', () => {
  it('fires timers as wall time reaches them, never jumps to later ones, and applies writes until it is ended', async () => {
    const clock = new VirtualClock();
    const store = new ObjectStore(clock);
    const rt = new Runtime(clock);
    const fired: string[] = [];
    clock.setTimer(50, () => fired.push('soon'));
    clock.setTimer(3_600_000, () => fired.push('in an hour'));
    const end = new AbortController();
    const held = rt.hold(end.signal);
    const created = await rt.external.submit('create', () => store.create('ConfigMap', { metadata: { name: 'cm' }, data: { a: '1' } }));
    assert.equal(created.metadata?.namespace, 'default');
    while (!fired.includes('soon')) await sleep(10);
    end.abort();
    await held;
    assert.deepEqual(fired, ['soon'], 'a held clock must not jump to the next timer as a normal run does');
    assert.ok(clock.now() >= 50 && clock.now() < 3_600_000);
    assert.ok(store.get('ConfigMap', 'cm', 'default'));
  });
});
