// Reconciles parked on driver calls: calls of different drivers overlap, while what the run writes, and in what order, never depends on which call ends first.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { DRIVER_CALL_OVERLAP } from '../../src/bench/cluster/cluster.js';
import { VirtualClock } from '../../src/bench/clock/virtual-clock.js';
import { Runtime } from '../../src/bench/runtime/runtime.js';
import { Controller } from '../../src/bench/runtime/controller.js';
import { driverGate } from '../../src/bench/runtime/reconcile-fiber.js';
import type { CallGate } from '../../src/csi/client.js';

/** What the drivers saw: calls in flight now and at most, and each driver's calls in the order they ran. */
class Drivers {
  inFlight = 0;
  maxInFlight = 0;
  readonly perDriver = new Map<string, { busy: boolean; order: string[] }>();
  readonly gates = new Map<string, CallGate>();

  /** A call to `driver` that takes `ms` of wall time; fails when the driver is already busy (a gate must prevent that). */
  call(driver: string, what: string, ms: number): Promise<string> {
    let gate = this.gates.get(driver);
    if (gate === undefined) this.gates.set(driver, gate = driverGate());
    return gate(async () => {
      const d = this.perDriver.get(driver) ?? { busy: false, order: [] };
      this.perDriver.set(driver, d);
      assert.equal(d.busy, false, `two calls at once on ${driver}`);
      d.busy = true;
      d.order.push(what);
      this.inFlight++;
      this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
      await sleep(ms);
      this.inFlight--;
      d.busy = false;
      return `${what} done`;
    });
  }
}

/**
 * A node's re-enacted sidecar (two per node, as kubelet and csi-provisioner share a driver): for
 * each key, calls to its driver with a write (to the shared log) before and after each;
 * `latency` picks each call's wall time.
 */
class NodeSidecar extends Controller {
  constructor(clock: VirtualClock, role: string, private readonly node: string, private readonly drivers: Drivers, private readonly log: string[], private readonly latency: (node: string, key: string) => number) {
    super(`${role}/${node}`, clock);
  }
  async reconcile(key: string): Promise<void> {
    this.log.push(`${this.node} ${key} start`);
    const a = await this.drivers.call(this.node, `${key} stage`, this.latency(this.node, key));
    this.log.push(`${this.node} ${a}`);
    const [b, c] = await Promise.all([this.drivers.call(this.node, `${key} publish`, this.latency(this.node, key)), this.drivers.call(`${this.node}-peer`, `${key} peek`, 1)]);
    this.log.push(`${this.node} ${b} ${c}`);
    if (key === 'fails') throw new Error('after the answer');
  }
}

async function run(overlap: number, latency: (node: string, key: string) => number): Promise<{ log: string[]; drivers: Drivers; errors: string[] }> {
  const clock = new VirtualClock();
  const rt = new Runtime(clock);
  rt.overlap = overlap;
  const log: string[] = [];
  const errors: string[] = [];
  rt.onError((controller, key, err) => errors.push(`${controller} ${key}: ${(err as Error).message}`));
  const drivers = new Drivers();
  const nodes = ['n1', 'n2', 'n3', 'n4'];
  const sidecars = nodes.map((n) => new NodeSidecar(clock, 'sidecar', n, drivers, log, latency));
  const others = nodes.map((n) => new NodeSidecar(clock, 'other', n, drivers, log, latency));
  for (const s of [...sidecars, ...others]) rt.register(s);
  for (const s of sidecars) for (const k of ['a', 'b', 'c']) s.enqueue(k);
  for (const s of others) s.enqueue('x');
  sidecars[1]!.enqueue('fails');
  await rt.drain();
  return { log, drivers, errors };
}

describe('runtime: reconciles parked on driver calls', () => {
  it('the run writes the same in the same order whichever driver answers first, and calls of different drivers overlap', async () => {
    // The first node's driver slowest in one run, fastest in the other.
    const slowFirst = await run(4, (node) => 40 - 9 * Number(node.slice(1)));
    const fastFirst = await run(4, (node) => 4 + 9 * Number(node.slice(1)));
    assert.deepEqual(fastFirst.log, slowFirst.log);
    assert.ok(slowFirst.drivers.maxInFlight > 1, `calls of different drivers overlapped: at most ${slowFirst.drivers.maxInFlight} at once`);
    assert.ok(slowFirst.drivers.maxInFlight <= 8, 'no more than four reconciles parked, two calls each');
    assert.deepEqual(slowFirst.errors, fastFirst.errors);
    // Each key's writes keep their order, and every key ran to its end.
    for (const n of ['n1', 'n2', 'n3', 'n4']) {
      for (const k of ['a', 'b', 'c']) {
        const mine = slowFirst.log.filter((l) => l.startsWith(`${n} ${k} `));
        assert.deepEqual(mine, [`${n} ${k} start`, `${n} ${k} stage done`, `${n} ${k} publish done ${k} peek done`]);
      }
    }
    // A controller with a parked reconcile takes no other key: one node's keys never interleave.
    const n1 = slowFirst.log.filter((l) => l.startsWith('n1 ') && !l.startsWith('n1 x '));
    assert.deepEqual(n1.map((l) => l.split(' ')[1]), ['a', 'a', 'a', 'b', 'b', 'b', 'c', 'c', 'c']);
    // Other nodes' work ran while n1's first reconcile waited.
    assert.ok(slowFirst.log.indexOf('n2 a start') < slowFirst.log.indexOf('n1 a stage done'), 'n2 started while n1 waited on its driver');
  });

  it('one driver takes its calls one at a time (two controllers of its node sending) in the order the run sent them', async () => {
    const a = await run(4, (node, key) => (key === 'a' ? 30 : 2) + Number(node.slice(1)));
    const b = await run(4, (node, key) => (key === 'x' ? 30 : 2) + Number(node.slice(1)));
    assert.deepEqual(a.errors, ['sidecar/n2 fails: after the answer'], 'never two calls at once on one driver');
    const order = a.drivers.perDriver.get('n2')!.order;
    assert.deepEqual(order.filter((c) => !c.startsWith('x ')), ['a stage', 'a publish', 'b stage', 'b publish', 'c stage', 'c publish', 'fails stage', 'fails publish']);
    assert.deepEqual(order.filter((c) => c.startsWith('x ')), ['x stage', 'x publish']);
    assert.deepEqual(b.drivers.perDriver.get('n2')!.order, order, 'the same order whichever call is slow');
  });

  it('a reconcile that throws after its answers is reported and retried later, as before', async () => {
    const r = await run(4, () => 3);
    assert.deepEqual(r.errors, ['sidecar/n2 fails: after the answer']);
    assert.ok(r.log.includes('n2 fails publish done fails peek done'));
  });

  it('overlap 1 runs each reconcile to its end before the next: one call in flight at most (two for a Promise.all)', async () => {
    const r = await run(1, (node) => 40 - 9 * Number(node.slice(1)));
    assert.ok(r.drivers.maxInFlight <= 2, `at most the two calls of one Promise.all: ${r.drivers.maxInFlight}`);
    const starts = r.log.filter((l) => l.endsWith(' start'));
    assert.deepEqual(starts.slice(0, 4), ['n1 a start', 'n1 b start', 'n1 c start', 'n2 a start'], 'priority order, each reconcile whole');
  });

  it('docs/bench.md gives the runs\' default: as many reconciles parked at once as the cluster allows', () => {
    const doc = readFileSync(fileURLToPath(new URL('../../../docs/bench.md', import.meta.url)), 'utf8');
    assert.match(doc, new RegExp(`up to ${DRIVER_CALL_OVERLAP} parked at once`));
    assert.match(doc, new RegExp(`or ${DRIVER_CALL_OVERLAP} are parked`));
    assert.match(doc, new RegExp(`up to ${DRIVER_CALL_OVERLAP} reconciles parked at once`));
  });
});
