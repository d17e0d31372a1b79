// A controller work queue: de-duplicated keys in FIFO order, as client-go's workqueue hands them out.

export class WorkQueue<Key extends string = string> {
  private readonly order: Key[] = [];
  private readonly queued = new Set<Key>();
  /** Told of each key queued (the runtime's QueuedControllers, to know which queues have work). */
  onAdd: (() => void) | undefined;

  add(key: Key): void {
    if (this.queued.has(key)) return;
    this.queued.add(key);
    this.order.push(key);
    this.onAdd?.();
  }

  get size(): number {
    return this.order.length;
  }

  /** The oldest key, removed from the queue. */
  pop(): Key | undefined {
    const key = this.order.shift();
    if (key !== undefined) this.queued.delete(key);
    return key;
  }
}
