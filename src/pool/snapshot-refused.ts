// The error a pool raises for a snapshot, restore or clone it cannot make as configured or as its storage stands: the operator's precondition, not a fault.

/** Answered FAILED_PRECONDITION: the call succeeds once the pool is configured or the snapshot replaced as the message says. */
export class SnapshotRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SnapshotRefusedError';
  }
}
