// The runtime's controllers in priority order, and which of them have queued keys: the next to run is found without trying every idle one.
import type { Controller } from './controller.js';

/**
 * A 100-node run registers several hundred controllers, and most events queue a key in a hundred
 * of them (every node's provisioner is told of every claim). Trying each controller in turn for
 * every key was a twentieth of the bench process's time there; this keeps the positions of the
 * controllers whose queue has keys, sorted, so the choice (the first in priority order that is
 * not busy) is the same and costs only the controllers with work.
 */
export class QueuedControllers {
  private readonly order: Controller[] = [];
  private readonly position = new Map<Controller, number>();
  /** Positions in `order` of controllers that may have keys (a queue found empty leaves), ascending. */
  private queued: number[] = [];
  private readonly marked = new Set<Controller>();

  /** Adds `c` last in the priority order, or just before `before`. */
  add(c: Controller, before?: Controller): void {
    const i = before === undefined ? -1 : this.order.indexOf(before);
    if (i < 0) this.order.push(c);
    else this.order.splice(i, 0, c);
    c.queue.onAdd = () => this.mark(c);
    this.renumber();
    if (c.queue.size > 0) this.mark(c);
  }

  remove(c: Controller): void {
    const i = this.order.indexOf(c);
    if (i < 0) return;
    this.order.splice(i, 1);
    c.queue.onAdd = undefined;
    this.marked.delete(c);
    this.renumber();
  }

  /** The first controller in priority order with a queued key that `skip` does not refuse. */
  first(skip: (c: Controller) => boolean): Controller | undefined {
    let i = 0;
    while (i < this.queued.length) {
      const c = this.order[this.queued[i]!]!;
      if (c.queue.size === 0) {
        this.queued.splice(i, 1);
        this.marked.delete(c);
        continue;
      }
      if (!skip(c)) return c;
      i++;
    }
    return undefined;
  }

  private mark(c: Controller): void {
    if (this.marked.has(c)) return;
    const p = this.position.get(c);
    if (p === undefined) return;
    this.marked.add(c);
    let lo = 0;
    let hi = this.queued.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.queued[mid]! < p) lo = mid + 1;
      else hi = mid;
    }
    this.queued.splice(lo, 0, p);
  }

  /** Positions move when a controller is added before another or removed (rare: a restarted sidecar). */
  private renumber(): void {
    this.position.clear();
    this.order.forEach((c, i) => this.position.set(c, i));
    this.queued = [...this.marked].map((c) => this.position.get(c)!).sort((a, b) => a - b);
  }
}
