// The shape every bench controller has: a name, a work queue and a reconcile function the runtime calls.
import { WorkQueue } from './work-queue.js';
import type { VirtualClock } from '../clock/virtual-clock.js';

/**
 * A controller as the runtime sees it. `reconcile` handles one key and may call real
 * drivers; the runtime runs one reconcile's code at a time and parks those waiting on driver
 * calls (ReconcileFiber), so the order of writes and events depends only on the inputs and
 * the seed, never on how long a driver call takes. A reconcile awaits each driver call it
 * sends where it sends it.
 * A controller with one kind of work keys it by object key (namespace/name or name); one
 * with several kinds uses a QueueKey (queue-key.ts) as `Key`, which says the kind.
 */
export abstract class Controller<Key extends string = string> {
  readonly queue = new WorkQueue<Key>();
  private readonly delayed = new Map<Key, { id: number; due: number }>();

  constructor(readonly name: string, protected readonly clock: VirtualClock) {}

  abstract reconcile(key: Key): Promise<void>;

  enqueue(key: Key): void {
    this.queue.add(key);
  }

  /** Queues `key` after `delayMs` of virtual time; an earlier pending request for the key wins. */
  enqueueAfter(key: Key, delayMs: number): void {
    if (delayMs <= 0) {
      this.enqueue(key);
      return;
    }
    const due = this.clock.now() + delayMs;
    const existing = this.delayed.get(key);
    if (existing !== undefined) {
      if (existing.due <= due) return;
      this.clock.cancel(existing.id);
    }
    const id = this.clock.setTimer(delayMs, () => {
      this.delayed.delete(key);
      this.enqueue(key);
    });
    this.delayed.set(key, { id, due });
  }

  /** Drops a delayed request, e.g. when the object went away. */
  cancelDelayed(key: Key): void {
    this.clock.cancel(this.delayed.get(key)?.id);
    this.delayed.delete(key);
  }

  /** Stops every timer of this controller (driver killed, run over). */
  stopTimers(): void {
    for (const d of this.delayed.values()) this.clock.cancel(d.id);
    this.delayed.clear();
  }
}
