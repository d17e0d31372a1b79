// Group commit of directory fsyncs: callers that change a directory while its fsync runs share the next one instead of each paying their own.
import { Batches } from './batches.js';

/**
 * An fsync of a directory makes durable every rename and unlink done in it before the fsync
 * began, so concurrent callers need not each run one: a caller who arrives while one is running
 * waits for the next, which starts when the running one ends and is shared by everyone who
 * arrived meanwhile (the running one may have begun before their change, so it proves nothing
 * for them). Each caller still resolves only after an fsync that began after its call, and a
 * failed fsync rejects everyone who shared it. Directories do not wait for one another.
 */
export class DirectorySyncs {
  /** One batcher per directory with a sync in flight or waiting; an idle one is dropped. */
  private readonly perDir = new Map<string, Batches<void, void>>();

  /** `syncOnce` runs one fsync of a directory. */
  constructor(private readonly syncOnce: (dir: string) => Promise<void>) {}

  /** Resolves once an fsync of `dir` that began after this call has succeeded. */
  sync(dir: string): Promise<void> {
    let batches = this.perDir.get(dir);
    if (batches === undefined) {
      // Every caller waiting when a run starts shares it: one fsync covers them all, however many.
      const b = new Batches<void, void>(async (callers) => {
        await this.syncOnce(dir);
        return callers.map(() => undefined);
      }, Number.MAX_SAFE_INTEGER);
      this.perDir.set(dir, b);
      batches = b;
    }
    const b = batches;
    return b.add(undefined).finally(() => {
      if (!b.busy && this.perDir.get(dir) === b) this.perDir.delete(dir);
    });
  }

  /** fsyncs running now, for tests. */
  get running(): number {
    return [...this.perDir.values()].filter((b) => b.busy).length;
  }
}
