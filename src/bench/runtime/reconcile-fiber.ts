// One reconcile as the runtime runs it: set aside while its driver calls are out, resumed when the runtime chooses.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { CallGate } from '../../csi/client.js';
import type { Controller } from './controller.js';

/** The reconcile whose code is running, as seen from a driver call it sends. */
const running = new AsyncLocalStorage<ReconcileFiber>();

interface Cycle {
  parked: Promise<void>;
  park: () => void;
  resumed: Promise<void>;
  resume: () => void;
}

function newCycle(): Cycle {
  let park = (): void => {};
  let resume = (): void => {};
  const parked = new Promise<void>((r) => { park = r; });
  const resumed = new Promise<void>((r) => { resume = r; });
  return { parked, park, resumed, resume };
}

/**
 * A reconcile of one key. When it sends a driver call and `parks` is set, it is parked: the
 * runtime goes on with other reconciles while the call runs, and resumes this one when its own
 * order says so, never when a call happens to end. So what each reconcile reads and writes, and
 * in what order, does not depend on how long a driver takes, while calls of different drivers
 * run side by side. The rule for reconciles that follows: await a driver call (or a Promise.all
 * of several) where it is sent, for code between sending and awaiting runs beside other reconciles.
 */
export class ReconcileFiber {
  /** Settles when the reconcile has ended; never rejects (see failed). */
  readonly done: Promise<void>;
  failed = false;
  error: unknown;
  /** The calls sent since the last resume, settled either way. */
  private calls: Promise<void>[] = [];
  private cycle: Cycle = newCycle();

  constructor(readonly controller: Controller, readonly key: string, reconcile: () => Promise<void>, private readonly parks: boolean) {
    this.done = running.run(this, reconcile).then(() => undefined, (err: unknown) => {
      this.failed = true;
      this.error = err;
    });
  }

  /** Settles when the reconcile has sent a driver call and waits to be resumed. */
  get parked(): Promise<void> {
    return this.cycle.parked;
  }

  /** Waits until every call sent since the last resume has ended, then lets the reconcile take their answers. */
  async resume(): Promise<void> {
    await Promise.all(this.calls);
    this.release();
  }

  /** Lets the reconcile take the answers it has (a reconcile that ended without awaiting a call it sent). */
  release(): void {
    this.calls = [];
    const ending = this.cycle;
    this.cycle = newCycle();
    ending.resume();
  }

  /** What the reconcile awaits for `call`: its answer, once the runtime resumes it. */
  wait<T>(call: Promise<T>): Promise<T> {
    if (!this.parks) return call;
    this.calls.push(call.then(() => undefined, () => undefined));
    const c = this.cycle;
    c.park();
    return c.resumed.then(() => call);
  }
}

/**
 * The gate for one driver's calls: they go to the driver one at a time in the order the run
 * sends them (so one node's calls keep their order, as a deterministic run needs), and a call
 * sent by a reconcile parks it (see ReconcileFiber). Calls from outside a reconcile only queue.
 */
export function driverGate(): CallGate {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(start: () => Promise<T>): Promise<T> => {
    const call = tail.then(start);
    tail = call.catch(() => undefined);
    const fiber = running.getStore();
    return fiber === undefined ? call : fiber.wait(call);
  };
}
