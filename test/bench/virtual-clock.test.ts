// The virtual clock and the runtime: timers fire in order, time jumps only when every queue is empty.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock, parseDuration, formatDuration } from '../../src/bench/clock/virtual-clock.js';
import { Runtime } from '../../src/bench/runtime/runtime.js';
import { Controller } from '../../src/bench/runtime/controller.js';

class Recorder extends Controller {
  readonly seen: string[] = [];
  async reconcile(key: string): Promise<void> {
    // Real work takes real time; the virtual clock must not move meanwhile.
    await new Promise((r) => setTimeout(r, 5));
    this.seen.push(`${key}@${this.clock.now()}`);
    if (key === 'a') this.enqueueAfter('b', 60_000);
  }
}

describe('virtual clock', () => {
  it('fires same-instant timers in creation order and parses durations', () => {
    const c = new VirtualClock();
    const order: number[] = [];
    c.setTimer(10, () => order.push(2));
    c.setTimer(5, () => order.push(1));
    c.setTimer(10, () => order.push(3));
    c.advanceTo(10);
    c.fireDue();
    assert.deepEqual(order, [1, 2, 3]);
    assert.equal(parseDuration('1m30s'), 90_000);
    assert.equal(parseDuration('250ms'), 250);
    assert.equal(formatDuration(90_000), '1m30s');
  });

  it('jumps a minute in no wall time once the queues are empty', async () => {
    const clock = new VirtualClock();
    const rt = new Runtime(clock);
    const r = new Recorder('r', clock);
    rt.register(r);
    r.enqueue('a');
    const t0 = Date.now();
    const why = await rt.runUntil(() => r.seen.length === 2, 10 * 60_000);
    assert.equal(why, 'condition');
    assert.deepEqual(r.seen, ['a@0', 'b@60000']);
    assert.ok(Date.now() - t0 < 5_000);
  });
});
