// A paced run's waits follow wall time: timers fire when wall time reaches them, client writes land while it waits, and the wait ends on its condition.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from '../../src/bench/clock/virtual-clock.js';
import { Runtime } from '../../src/bench/runtime/runtime.js';

describe('paced runUntil', () => {
  it('never lets virtual time run ahead of wall time, firing timers on the way to the deadline', async () => {
    const clock = new VirtualClock();
    const rt = new Runtime(clock);
    rt.paced = true;
    const fired: number[] = [];
    clock.setTimer(150, () => fired.push(clock.now()));
    const wallStart = Date.now();
    const reason = await rt.runUntil(() => false, 400);
    const wallMs = Date.now() - wallStart;
    assert.equal(reason, 'deadline');
    assert.equal(clock.now(), 400);
    assert.ok(wallMs >= 400, `virtual 400 ms took ${wallMs} ms of wall time, not less`);
    assert.equal(fired.length, 1);
    assert.ok(fired[0]! >= 150);
  });

  it('waits for a client write that comes later in wall time, where an unpaced run with nothing due stops at once', async () => {
    const clock = new VirtualClock();
    const rt = new Runtime(clock);
    let written = false;
    const write = (): void => { setTimeout(() => { void rt.external.submit('late write', () => { written = true; }); }, 100); };
    write();
    assert.equal(await rt.runUntil(() => written, 60_000), 'idle', 'unpaced: no timer, no work: idle before the write');
    assert.equal(written, false);
    await new Promise((r) => setTimeout(r, 150));
    rt.external.apply();
    rt.paced = true;
    written = false;
    const v0 = clock.now();
    write();
    assert.equal(await rt.runUntil(() => written, v0 + 60_000), 'condition');
    assert.ok(clock.now() < v0 + 60_000, 'ended on the write, not at the deadline');
  });
});
