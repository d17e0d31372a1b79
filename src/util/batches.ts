// Group runs of one operation: requests that arrive while a run is in flight share the next run, so a burst pays for one run, not one each.

interface Waiting<T, R> {
  item: T;
  resolve: (r: R) => void;
  reject: (err: unknown) => void;
}

/**
 * A request that finds nothing running starts a run of its own at once, so a lone caller waits
 * for no one. Requests that arrive while a run is in flight wait for it to end and then share
 * the next run, up to `maxBatch` of them, in their order of arrival. `runBatch` answers each
 * item of its batch in order; if it throws, every item of that batch gets the error and later
 * batches still run. Runs never overlap: the operation may assume it is alone.
 */
export class Batches<T, R> {
  private readonly waiting: Array<Waiting<T, R>> = [];
  private running = false;
  /** Runs so far and the items they took, for tests. */
  readonly stats = { runs: 0, items: 0 };

  constructor(
    private readonly runBatch: (items: T[]) => Promise<R[]>,
    private readonly maxBatch = 64,
  ) {
    if (!Number.isInteger(maxBatch) || maxBatch < 1) throw new RangeError(`maxBatch must be a whole number of at least 1, not ${maxBatch}`);
  }

  /** Whether a run is in flight or requests wait for one. */
  get busy(): boolean {
    return this.running || this.waiting.length > 0;
  }

  /** Resolves with the answer of the run that took `item`. */
  add(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      if (!this.running) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (this.waiting.length > 0) {
        const batch = this.waiting.splice(0, this.maxBatch);
        this.stats.runs += 1;
        this.stats.items += batch.length;
        try {
          const answers = await this.runBatch(batch.map((w) => w.item));
          if (answers.length !== batch.length) throw new Error(`a batch of ${batch.length} got ${answers.length} answers`);
          batch.forEach((w, i) => w.resolve(answers[i] as R));
        } catch (err) {
          for (const w of batch) w.reject(err);
        }
      }
    } finally {
      this.running = false;
    }
  }
}
