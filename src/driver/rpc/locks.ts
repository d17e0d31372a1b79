// Per-key try-locks: a second call on a busy volume is told ABORTED at once instead of queueing behind the first.
import { aborted } from './errors.js';

export class KeyedLocks {
  private readonly held = new Set<string>();

  /** Runs `fn` holding every key in `keys`; throws ABORTED when any is held. */
  async with<T>(keys: readonly string[], fn: () => Promise<T>): Promise<T> {
    const busy = keys.find((k) => this.held.has(k));
    if (busy !== undefined) throw aborted(`an operation on ${busy} is already in progress; retry later`);
    for (const k of keys) this.held.add(k);
    try {
      return await fn();
    } finally {
      for (const k of keys) this.held.delete(k);
    }
  }

  get size(): number {
    return this.held.size;
  }
}
