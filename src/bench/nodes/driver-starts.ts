// Starts the drivers of the Nodes one apply brings, a few at a time, ahead of the in-order apply that registers them.
import type { NodeDriver } from './node-driver.js';

/**
 * Driver processes started at once. A start is mostly Node.js loading the driver, a few tenths
 * of a second of CPU on the 2-core development machine (docs/benchmarks.md, "Driver start",
 * part (f)); four at a time keep two cores busy while some wait
 * for their sockets, and bound the memory and the processes a large apply spawns in one go.
 */
export const DRIVER_START_CONCURRENCY = 4;

/**
 * The drivers started ahead. Starting one touches no object, event or timer of the run, so
 * starting them in parallel changes nothing a controller can see: the Nodes are still
 * created, and their components registered, one by one in manifest order, each only once
 * its own driver is ready (`take`). A driver whose Node is never added (an earlier Node
 * failed), or whose start failed, is handed back by `leftovers` so teardown ends it too.
 */
export class DriverStarts {
  private readonly started = new Map<string, { driver: NodeDriver; ready: Promise<void>; begun: boolean; dropped: boolean }>();
  /** Drivers whose start failed: nothing runs them, but a mount namespace may be left to end. */
  private readonly failed: NodeDriver[] = [];
  private readonly waiting: (() => void)[] = [];
  private running = 0;

  constructor(private readonly concurrency = DRIVER_START_CONCURRENCY) {}

  /** Begins starting `driver` as soon as a slot is free (unless one is started for `name` already). */
  start(name: string, driver: NodeDriver): void {
    if (this.started.has(name)) return;
    const entry = { driver, ready: Promise.resolve(), begun: false, dropped: false };
    entry.ready = this.slot().then(async () => {
      try {
        if (entry.dropped) throw new Error(`driver of node ${name} not started: the apply that asked for it failed, or the run ended`);
        entry.begun = true;
        await driver.start();
      } finally {
        this.release();
      }
    });
    // Failures surface in take(); until then they must not count as unhandled.
    entry.ready.catch(() => undefined);
    this.started.set(name, entry);
  }

  /**
   * Drops the starts still waiting for a slot: the apply that asked for them has failed (a
   * driver that refuses its flags refuses them on every node), or the run is over, so they
   * would only start to be stopped. They hold nothing yet; the same Node applied again starts
   * afresh.
   */
  dropQueued(): void {
    for (const [name, entry] of this.started) {
      if (entry.begun) continue;
      entry.dropped = true;
      this.started.delete(name);
    }
  }

  has(name: string): boolean {
    return this.started.has(name);
  }

  /**
   * The driver started for `name`, once ready. A failed start rejects, and its driver is kept
   * for `leftovers`: it may hold a mount namespace that teardown must end.
   */
  async take(name: string): Promise<NodeDriver> {
    const s = this.started.get(name);
    if (s === undefined) throw new Error(`no driver was started for node ${name}`);
    this.started.delete(name);
    try {
      await s.ready;
    } catch (err) {
      this.failed.push(s.driver);
      throw err;
    }
    return s.driver;
  }

  /**
   * Drivers started ahead whose Node was never added, and those whose start failed, for
   * teardown to end; waits for starts under way and begins no more (dropQueued).
   */
  async leftovers(): Promise<NodeDriver[]> {
    this.dropQueued();
    const all = [...this.started.values()];
    this.started.clear();
    await Promise.allSettled(all.map((s) => s.ready));
    return [...this.failed.splice(0), ...all.map((s) => s.driver)];
  }

  private slot(): Promise<void> {
    if (this.running < this.concurrency) {
      this.running++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push(() => { this.running++; resolve(); }));
  }

  private release(): void {
    this.running--;
    this.waiting.shift()?.();
  }
}

/** `fn` over `items`, at most `limit` at a time; results in the order of `items`. */
export async function boundedMap<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}
