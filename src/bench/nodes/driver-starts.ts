// Starts the drivers of the Nodes one apply brings, a few at a time, ahead of the in-order apply that registers them.
import type { NodeDriver } from './node-driver.js';

/**
 * Driver processes started at once. A start is mostly Node.js loading the driver, about 0.2 s
 * of CPU on the 2-core development machine since the driver is one bundled module
 * (docs/benchmarks.md, "Driver start"); four at a time keep two cores busy while some wait
 * for their sockets, and bound the memory and the processes a large apply spawns in one go.
 */
export const DRIVER_START_CONCURRENCY = 4;

/**
 * The drivers started ahead. Starting one touches no object, event or timer of the run, so
 * starting them in parallel changes nothing a controller can see: the Nodes are still
 * created, and their components registered, one by one in manifest order, each only once
 * its own driver is ready (`take`). A driver whose Node is never added (an earlier Node
 * failed) is handed back by `leftovers` so teardown stops it too.
 */
export class DriverStarts {
  private readonly started = new Map<string, { driver: NodeDriver; ready: Promise<void> }>();
  private readonly waiting: (() => void)[] = [];
  private running = 0;

  constructor(private readonly concurrency = DRIVER_START_CONCURRENCY) {}

  /** Begins starting `driver` as soon as a slot is free. */
  start(name: string, driver: NodeDriver): void {
    if (this.started.has(name)) return;
    const ready = this.slot().then(async () => {
      try {
        await driver.start();
      } finally {
        this.release();
      }
    });
    // Failures surface in take(); until then they must not count as unhandled.
    ready.catch(() => undefined);
    this.started.set(name, { driver, ready });
  }

  /** The driver started ahead for `name`, once ready (rejects as its start did); undefined if none was. */
  async take(name: string): Promise<NodeDriver | undefined> {
    const s = this.started.get(name);
    if (s === undefined) return undefined;
    this.started.delete(name);
    await s.ready;
    return s.driver;
  }

  /** Drivers started ahead whose Node was never added; waits for starts still under way. */
  async leftovers(): Promise<NodeDriver[]> {
    const all = [...this.started.values()];
    this.started.clear();
    await Promise.allSettled(all.map((s) => s.ready));
    return all.map((s) => s.driver);
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
