// A controller work queue: de-duplicated keys in FIFO order, as client-go's workqueue hands them out.

export class WorkQueue {
  private readonly order: string[] = [];
  private readonly queued = new Set<string>();

  add(key: string): void {
    if (this.queued.has(key)) return;
    this.queued.add(key);
    this.order.push(key);
  }

  /** The oldest key, removed from the queue. */
  pop(): string | undefined {
    const key = this.order.shift();
    if (key !== undefined) this.queued.delete(key);
    return key;
  }
}
