// Writes from API clients, held until the runtime is between two reconciles and applied there, those queued together in an order of the clients' own.

/** The run is over (or tearing down): no more client writes are taken. */
export class RunOverError extends Error {}

interface PendingWrite {
  label: string;
  order: string;
  write: () => unknown;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

/**
 * The one door for writes that do not come from a controller. A client's request can
 * arrive while a reconcile awaits a driver call; applying it then would interleave with
 * that controller's reads and writes. Queued here, it is applied by the runtime before the
 * next reconcile, so every controller sees it through the same watch events, in the same
 * order rules, as a write of its own, and a run with a client attached stays explainable.
 */
export class ExternalWrites {
  private pending: PendingWrite[] = [];
  private closedReason: string | undefined;
  /** One shared wake-up for whoever waits for the next write (the held runtime). */
  private wake: { promise: Promise<void>; resolve: () => void } | undefined;
  /** Writes applied so far. */
  applied = 0;

  /**
   * Queues `write`; resolves with its result once applied (or rejects with what it threw).
   * `order` places it among the writes queued with it (see apply).
   */
  submit<T>(label: string, write: () => T, order = ''): Promise<T> {
    if (this.closedReason !== undefined) return Promise.reject(new RunOverError(this.closedReason));
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ label, order, write, resolve: resolve as (value: unknown) => void, reject });
      this.wakeUp();
    });
  }

  get size(): number {
    return this.pending.length;
  }

  /**
   * Applies every queued write; returns how many were applied. Writes queued together were in
   * flight at once, and which reached the server first is wall-time chance (two drivers
   * starting side by side each post an Event): they are applied by their `order` (the client,
   * then the request), ties in arrival order, so a run does not depend on that chance. A
   * client's own writes keep their order: one it sent after an answer was never queued with it.
   */
  apply(): number {
    const batch = this.pending.sort((a, b) => (a.order < b.order ? -1 : a.order > b.order ? 1 : 0));
    this.pending = [];
    for (const p of batch) {
      try {
        p.resolve(p.write());
      } catch (err) {
        p.reject(err);
      }
    }
    this.applied += batch.length;
    return batch.length;
  }

  /** Resolves as soon as a write is queued (at once if one already is). */
  whenQueued(): Promise<void> {
    if (this.pending.length > 0 || this.closedReason !== undefined) return Promise.resolve();
    if (this.wake === undefined) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => { resolve = r; });
      this.wake = { promise, resolve };
    }
    return this.wake.promise;
  }

  private wakeUp(): void {
    this.wake?.resolve();
    this.wake = undefined;
  }

  /** Refuses further writes and those still queued: the run is ending. */
  close(reason: string): void {
    this.closedReason = reason;
    for (const p of this.pending.splice(0)) p.reject(new RunOverError(reason));
    this.wakeUp();
  }

  get closed(): boolean {
    return this.closedReason !== undefined;
  }
}
