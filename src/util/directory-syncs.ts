// Group commit of directory fsyncs: callers that change a directory while its fsync runs share the next one instead of each paying their own.

/**
 * An fsync of a directory makes durable every rename and unlink done in it before the fsync
 * began, so concurrent callers need not each run one: a caller who arrives while one is running
 * waits for the next, which starts when the running one ends and is shared by everyone who
 * arrived meanwhile (the running one may have begun before their change, so it proves nothing
 * for them). Each caller still resolves only after an fsync that began after its call, and a
 * failed fsync rejects everyone who shared it. Directories do not wait for one another.
 */
export class DirectorySyncs {
  private readonly inFlight = new Map<string, { settled: Promise<void>; next: Promise<void> | undefined }>();

  /** `syncOnce` runs one fsync of a directory. */
  constructor(private readonly syncOnce: (dir: string) => Promise<void>) {}

  /** Resolves once an fsync of `dir` that began after this call has succeeded. */
  sync(dir: string): Promise<void> {
    const current = this.inFlight.get(dir);
    if (current === undefined) return this.begin(dir);
    current.next ??= current.settled.then(() => this.begin(dir));
    return current.next;
  }

  /** fsyncs running now, for tests. */
  get running(): number {
    return this.inFlight.size;
  }

  private begin(dir: string): Promise<void> {
    const result = this.syncOnce(dir);
    const entry = { settled: result.then(() => undefined, () => undefined), next: undefined as Promise<void> | undefined };
    this.inFlight.set(dir, entry);
    // Nobody waiting for a next one: the directory has no fsync in flight any more.
    void entry.settled.then(() => {
      if (this.inFlight.get(dir) === entry && entry.next === undefined) this.inFlight.delete(dir);
    });
    return result;
  }
}
