// Tells a capacity refresh whether the pool's own operations overlapped it, so a figure read mid-operation is not kept.

/**
 * While an operation that takes or frees space runs (fallocate, rm, lvcreate, lvremove), the
 * free space the backend reads and its own bytes disagree. `inFlight` counts such operations
 * and `changes` every start and end of one: a refresh that saw any keeps the previous figure
 * (the operation's own refresh follows).
 */
export class SpaceChanges {
  private inFlight = 0;
  private changes = 0;

  /** Runs an operation that changes the pool's use of its storage. */
  async run<T>(op: () => Promise<T>): Promise<T> {
    this.inFlight += 1;
    this.changes += 1;
    try {
      return await op();
    } finally {
      this.inFlight -= 1;
      this.changes += 1;
    }
  }

  /** Where a refresh starts: undefined when an operation is running now (there is nothing to read). */
  mark(): number | undefined {
    return this.inFlight > 0 ? undefined : this.changes;
  }

  /** Whether nothing started or ended since `mark`: what was read may be kept. */
  quietSince(mark: number): boolean {
    return this.inFlight === 0 && this.changes === mark;
  }
}
