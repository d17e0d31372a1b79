// The requests a component's event recorder sends for the events it records: create, patch for a repeat, nothing once its spam filter trips.
import type { BenchEvent } from './event-log.js';
import type { RequestCounts } from './request-counts.js';

/** client-go's EventCorrelator: repeats of one event within this window become a Patch of its count. */
const AGGREGATE_WINDOW_MS = 10 * 60_000;
/** Its spam filter: a token bucket per source and object, 25 events at once, one more every 5 minutes. */
const SPAM_BURST = 25;
const SPAM_REFILL_MS = 5 * 60_000;

interface Bucket {
  tokens: number;
  atMs: number;
}

/**
 * Counts events as client-go's event broadcaster sends them: the first of a kind (same
 * source, object, type, reason and message) is a `create events`, a repeat within 10
 * minutes a `patch events` (its count and last timestamp), and events beyond the spam
 * filter's budget for one object are dropped before any request. The bench's controllers
 * record an event once per state change, so repeats are rarer here than on a cluster.
 */
export class EventRequests {
  private readonly lastSeen = new Map<string, number>();
  private readonly buckets = new Map<string, Bucket>();

  constructor(private readonly counts: RequestCounts, private readonly clientFor: (source: string) => string | undefined) {}

  observe(e: BenchEvent): void {
    const client = this.clientFor(e.source);
    if (client === undefined) return;
    const object = `${e.kind}/${e.namespace ?? ''}/${e.name}`;
    if (!this.take(`${e.source}\u0000${object}`, e.timeMs)) return;
    const key = `${e.source}\u0000${object}\u0000${e.type}\u0000${e.reason}\u0000${e.message}`;
    const last = this.lastSeen.get(key);
    this.lastSeen.set(key, e.timeMs);
    this.counts.record(client, last !== undefined && e.timeMs - last <= AGGREGATE_WINDOW_MS ? 'patch' : 'create', 'events');
  }

  private take(key: string, nowMs: number): boolean {
    const b = this.buckets.get(key) ?? { tokens: SPAM_BURST, atMs: nowMs };
    const refill = Math.floor((nowMs - b.atMs) / SPAM_REFILL_MS);
    if (refill > 0) {
      b.tokens = Math.min(SPAM_BURST, b.tokens + refill);
      b.atMs += refill * SPAM_REFILL_MS;
    }
    this.buckets.set(key, b);
    if (b.tokens <= 0) return false;
    b.tokens--;
    return true;
  }
}
