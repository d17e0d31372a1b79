// Runs the controllers: their reconciles in a fixed priority order, driver calls overlapping, the virtual clock jumping only when all are idle.
import type { Controller } from './controller.js';
import type { VirtualClock } from '../clock/virtual-clock.js';
import { ExternalWrites } from './external-writes.js';
import { ReconcileFiber } from './reconcile-fiber.js';
import { QueuedControllers } from './queued-controllers.js';

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
 *
 * Only one reconcile's code runs at a time, but with `overlap` above 1 a reconcile waiting on
 * driver calls is parked (ReconcileFiber) and the others go on, up to `overlap` parked at once;
 * a controller with a parked reconcile takes no other key (one worker each). Parked reconciles
 * are resumed oldest first, when no other key can run or the limit is reached: a choice made
 * from the run's own state, never from which call ended first, so a seed gives one run.
 */
export class Runtime {
  private readonly controllers = new QueuedControllers();
  readonly stats: RuntimeStats = { reconciles: 0, clockJumps: 0 };
  private errorSink: (controller: string, key: string, err: unknown) => void = () => {};
  /** Reconciles per controller and key at the current virtual instant. */
  private readonly atInstant = new Map<string, number>();
  private instant = -1;

  /** Set to stop a run between reconciles (Ctrl-C). */
  signal: AbortSignal | undefined;

  /**
   * Waits never let virtual time run ahead of wall time (see runUntil); for runs whose
   * drivers act on their own wall-clock timers and write back through the API.
   */
  paced = false;

  /** Client writes, applied between reconciles. */
  readonly external = new ExternalWrites();

  /** Reconciles parked on driver calls at most at once; 1 runs each reconcile to its end before the next. */
  overlap = 1;
  /** Reconciles parked on driver calls, oldest first. */
  private readonly parked: ReconcileFiber[] = [];
  /** Controllers with a parked reconcile. */
  private readonly busy = new Set<Controller>();

  constructor(readonly clock: VirtualClock) {}

  /** Adds a controller last in the priority order, or just before `before` (a restarted sidecar takes back its place). */
  register(c: Controller, before?: Controller): void {
    this.controllers.add(c, before);
  }

  unregister(c: Controller): void {
    this.controllers.remove(c);
    c.stopTimers();
  }

  onError(sink: (controller: string, key: string, err: unknown) => void): void {
    this.errorSink = sink;
  }

  /**
   * Runs one queued key of the first controller that has one and is not busy, until it ends or
   * parks; else resumes the oldest parked reconcile. False when there is nothing to do.
   */
  async step(): Promise<boolean> {
    // Client writes first: what they change is queued like any watch event before the next key runs.
    if (this.external.apply() > 0) return true;
    if (this.parked.length < this.overlap && await this.startNext()) return true;
    const oldest = this.parked.shift();
    if (oldest === undefined) return false;
    await oldest.resume();
    await this.follow(oldest);
    return true;
  }

  private async startNext(): Promise<boolean> {
    const c = this.controllers.first((x) => this.busy.has(x));
    const key = c?.queue.pop();
    if (c === undefined || key === undefined) return false;
    this.stats.reconciles++;
    if (this.clock.now() !== this.instant) {
      this.instant = this.clock.now();
      this.atInstant.clear();
    }
    const id = `${c.name} ${key}`;
    const n = (this.atInstant.get(id) ?? 0) + 1;
    this.atInstant.set(id, n);
    if (n > LIVELOCK_LIMIT) throw new LivelockError(`livelock: ${c.name} reconciled ${key} ${LIVELOCK_LIMIT} times at one virtual instant; it requeues itself without waiting`);
    await this.follow(new ReconcileFiber(c, key, () => c.reconcile(key), this.overlap > 1));
    return true;
  }

  /** Waits until `f` ends or parks. */
  private async follow(f: ReconcileFiber): Promise<void> {
    const parked = await Promise.race([f.done.then(() => false), f.parked.then(() => true)]);
    if (parked) {
      this.parked.push(f);
      this.busy.add(f.controller);
      return;
    }
    this.busy.delete(f.controller);
    f.release();
    if (f.failed) {
      // A reconcile that throws is retried later, as a controller's rate-limited requeue would.
      this.errorSink(f.controller.name, f.key, f.error);
      f.controller.enqueueAfter(f.key, 5_000);
    }
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
    if (this.paced) return this.runPaced(condition, deadlineMs);
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

  /**
   * runUntil for a paced run: virtual time moves with wall time from this call on (never
   * ahead of it), timers fire when their wall time comes, client writes are applied as they
   * arrive, and the condition is checked after each. Never 'idle': a driver may still write.
   */
  private async runPaced(condition: () => boolean, deadlineMs: number): Promise<StopReason> {
    const wallStart = Date.now();
    const virtualStart = this.clock.now();
    for (;;) {
      await this.drain();
      if (this.signal?.aborted) throw new Error('interrupted');
      if (condition()) return 'condition';
      this.clock.advanceTo(Math.min(deadlineMs, virtualStart + (Date.now() - wallStart)));
      if (this.clock.fireDue() > 0) {
        this.stats.clockJumps++;
        continue;
      }
      if (this.clock.now() >= deadlineMs) return 'deadline';
      const next = Math.min(deadlineMs, this.clock.nextDue() ?? deadlineMs);
      // Wake for the next timer, a client write, or once a second to look at the signal.
      const waitMs = Math.max(1, Math.min(1_000, next - this.clock.now()));
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([new Promise<void>((resolve) => { timer = setTimeout(resolve, waitMs); }), this.external.whenQueued()]);
      clearTimeout(timer);
    }
  }

  /**
   * Applies client writes as they arrive, and the work they cause, until `condition` holds
   * or `wallMs` of wall time pass, with the virtual clock standing still: for what only a
   * driver's own wall-clock timers bring (an orphan report), while the run stays the same
   * run for a seed (no controller timer fires meanwhile).
   */
  async awaitClients(condition: () => boolean, wallMs: number): Promise<StopReason> {
    const deadline = Date.now() + wallMs;
    for (;;) {
      await this.drain();
      if (this.signal?.aborted) throw new Error('interrupted');
      if (condition()) return 'condition';
      const left = deadline - Date.now();
      if (left <= 0) return 'deadline';
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([new Promise<void>((resolve) => { timer = setTimeout(resolve, Math.min(left, 200)); }), this.external.whenQueued()]);
      clearTimeout(timer);
    }
  }

  /**
   * Keeps the cluster running with the virtual clock following wall-clock time, until
   * `until` is aborted: timers fire when their wall time comes and client writes are
   * applied as they arrive, so a person can watch and change a live cluster.
   */
  async hold(until: AbortSignal): Promise<void> {
    const wallStart = Date.now();
    const virtualStart = this.clock.now();
    // The steps have moved virtual time ahead; from here it follows the wall clock, so one shift holds for the whole hold.
    this.clock.alignDisplayToWall();
    const ended = new Promise<void>((resolve) => {
      if (until.aborted) resolve();
      else until.addEventListener('abort', () => resolve(), { once: true });
    });
    for (;;) {
      await this.drain();
      if (until.aborted || this.signal?.aborted) return;
      this.clock.advanceTo(virtualStart + (Date.now() - wallStart));
      if (this.clock.fireDue() > 0) {
        this.stats.clockJumps++;
        continue;
      }
      const next = this.clock.nextDue();
      // Wake for the next timer, a client write or the end; at least once a second, so virtual time keeps pace.
      const waitMs = Math.min(1_000, next === undefined ? 1_000 : Math.max(1, next - this.clock.now()));
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([new Promise<void>((resolve) => { timer = setTimeout(resolve, waitMs); }), this.external.whenQueued(), ended]);
      clearTimeout(timer);
    }
  }
}
