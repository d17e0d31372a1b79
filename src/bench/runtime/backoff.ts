// The one retry backoff of the bench's components: a start delay doubling per attempt up to a cap, as client-go's and kubelet's.

/** Delay before attempt `attempt` (1-based): `startMs`, doubling each time, never above `maxMs`. */
export function doublingDelayMs(attempt: number, startMs: number, maxMs: number): number {
  return Math.min(startMs * 2 ** (attempt - 1), maxMs);
}
