// The runtime's choice of the next controller: the first in priority order with a queued key that is not busy, as trying each in turn chose, across registrations before others and removals.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from '../../src/bench/clock/virtual-clock.js';
import { Controller } from '../../src/bench/runtime/controller.js';
import { QueuedControllers } from '../../src/bench/runtime/queued-controllers.js';
import { Runtime } from '../../src/bench/runtime/runtime.js';

class Recorder extends Controller {
  constructor(name: string, clock: VirtualClock, private readonly log: string[]) {
    super(name, clock);
  }
  async reconcile(key: string): Promise<void> {
    this.log.push(`${this.name}:${key}`);
  }
}

/** The choice as the runtime made it before: try every controller in order. */
function byScan(order: Controller[], busy: Set<Controller>): Controller | undefined {
  return order.find((c) => !busy.has(c) && c.queue.size > 0);
}

describe('QueuedControllers', () => {
  it('picks the first controller in priority order with work, skipping busy ones', () => {
    const clock = new VirtualClock();
    const [a, b, c] = ['a', 'b', 'c'].map((n) => new Recorder(n, clock, []));
    const q = new QueuedControllers();
    q.add(a!);
    q.add(c!);
    q.add(b!, c); // a, b, c
    assert.equal(q.first(() => false), undefined);
    c!.enqueue('k1');
    a!.enqueue('k2');
    assert.equal(q.first(() => false), a);
    assert.equal(q.first((x) => x === a), c);
    a!.queue.pop();
    assert.equal(q.first(() => false), c);
    b!.enqueue('k3');
    assert.equal(q.first(() => false), b);
    q.remove(b!);
    assert.equal(q.first(() => false), c);
    // Keys queued before registration count.
    const d = new Recorder('d', clock, []);
    d.enqueue('early');
    q.add(d, a);
    assert.equal(q.first(() => false), d);
  });

  it('makes the same choices as trying every controller, over a seeded random run', () => {
    const clock = new VirtualClock();
    const q = new QueuedControllers();
    const order: Controller[] = [];
    const all: Controller[] = [];
    let seed = 20261207;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const busy = new Set<Controller>();
    for (let step = 0; step < 5000; step++) {
      const r = rand(100);
      if (r < 5 || order.length === 0) {
        const c = new Recorder(`c${all.length}`, clock, []);
        all.push(c);
        const before = order.length > 0 && rand(2) === 0 ? order[rand(order.length)] : undefined;
        q.add(c, before);
        const i = before === undefined ? -1 : order.indexOf(before);
        if (i < 0) order.push(c);
        else order.splice(i, 0, c);
      } else if (r < 7 && order.length > 1) {
        const c = order.splice(rand(order.length), 1)[0]!;
        q.remove(c);
        busy.delete(c);
      } else if (r < 50) {
        order[rand(order.length)]!.enqueue(`k${rand(20)}`);
      } else if (r < 60) {
        const c = order[rand(order.length)]!;
        if (busy.has(c)) busy.delete(c);
        else busy.add(c);
      } else {
        const want = byScan(order, busy);
        assert.equal(q.first((x) => busy.has(x)), want, `step ${step}`);
        want?.queue.pop();
      }
    }
  });

  it('runs the runtime\'s reconciles in priority order', async () => {
    const clock = new VirtualClock();
    const log: string[] = [];
    const rt = new Runtime(clock);
    const low = new Recorder('low', clock, log);
    const high = new Recorder('high', clock, log);
    rt.register(low);
    rt.register(high, low);
    low.enqueue('1');
    high.enqueue('2');
    low.enqueue('3');
    await rt.drain();
    assert.deepEqual(log, ['high:2', 'low:1', 'low:3']);
  });
});
