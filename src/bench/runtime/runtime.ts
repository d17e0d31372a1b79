// Runs the controllers: one reconcile at a time in a fixed priority order, the virtual clock jumping only when all are idle.
import type { Controller } from './controller.js';
import type { VirtualClock } from '../clock/virtual-clock.js';

/** Reconciles of one key at one virtual instant beyond which the run is a livelock, not progress. */
const LIVELOCK_LIMIT = 1_000;

/** A controller keeps requeueing a key without the clock moving: the run would never end. */
export class LivelockError extends Error {}

/** Why runUntil returned. */
export type StopReason = 'condition' | 'deadline' | 'idle';

export interface RuntimeStats {
  reconciles: number;
  clockJumps: number;
}

/**
 * The scheduler of the simulation itself. Controllers are tried in registration order
 * and the first with queued work runs one key; the scheduler comes first because the
 * real one places pods in milliseconds while provisioning takes seconds, and that gap is
 * what makes stale capacity visible. With no work anywhere the clock jumps to the next
 * timer.
 */
export class Runtime {
  private readonly controllers: Controller[] = [];
  readonly stats: RuntimeStats = { reconciles: 0, clockJumps: 0 };
  private errorSink: (controller: string, key: string, err: unknown) => void = () => {};
  /** Reconciles per controller and key at the current virtual instant. */
  private readonly atInstant = new Map<string, number>();
  private instant = -1;

  /** Set to stop a run between reconciles (Ctrl-C). */
  signal: AbortSignal | undefined;

  constructor(readonly clock: VirtualClock) {}

  register(c: Controller): void {
    this.controllers.push(c);
  }

  unregister(c: Controller): void {
    const i = this.controllers.indexOf(c);
    if (i >= 0) this.controllers.splice(i, 1);
    c.stopTimers();
  }

  onError(sink: (controller: string, key: string, err: unknown) => void): void {
    this.errorSink = sink;
  }

  /** Runs one queued key of the first controller that has one; false when all queues are empty. */
  async step(): Promise<boolean> {
    for (const c of this.controllers) {
      const key = c.queue.pop();
      if (key === undefined) continue;
      this.stats.reconciles++;
      if (this.clock.now() !== this.instant) {
        this.instant = this.clock.now();
        this.atInstant.clear();
      }
      const id = `${c.name} ${key}`;
      const n = (this.atInstant.get(id) ?? 0) + 1;
      this.atInstant.set(id, n);
      if (n > LIVELOCK_LIMIT) throw new LivelockError(`livelock: ${c.name} reconciled ${key} ${LIVELOCK_LIMIT} times at one virtual instant; it requeues itself without waiting`);
      try {
        await c.reconcile(key);
      } catch (err) {
        // A reconcile that throws is retried later, as a controller's rate-limited requeue would.
        this.errorSink(c.name, key, err);
        c.enqueueAfter(key, 5_000);
      }
      return true;
    }
    return false;
  }

  /** Runs every queue dry without moving the clock. */
  async drain(): Promise<void> {
    while (!this.signal?.aborted && await this.step()) { /* keep going */ }
  }

  /**
   * Works and moves the clock until `condition` holds (checked whenever all queues are
   * empty), the virtual deadline passes, or nothing is left to do.
   */
  async runUntil(condition: () => boolean, deadlineMs: number): Promise<StopReason> {
    for (;;) {
      await this.drain();
      if (this.signal?.aborted) throw new Error('interrupted');
      if (condition()) return 'condition';
      const next = this.clock.nextDue();
      if (next === undefined) return 'idle';
      if (next > deadlineMs) {
        this.clock.advanceTo(deadlineMs);
        return 'deadline';
      }
      this.clock.advanceTo(next);
      this.stats.clockJumps++;
      this.clock.fireDue();
    }
  }
}
