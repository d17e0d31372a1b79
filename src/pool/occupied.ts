// The error a create raises when the place its new storage would take already holds something Lode did not make, which it neither uses nor removes.

/**
 * Answered FAILED_PRECONDITION: the node's state is in the way, not the call, which succeeds
 * once an operator moves the object away. Raised before anything is made, so the create's
 * undo removes its record only.
 */
export class StorageOccupiedError extends Error {
  constructor(readonly location: string, what: string) {
    super(`${location} ${what}, which no record of Lode accounts for: Lode neither uses nor removes it; move it away, or remove it if it is garbage (see docs/operations.md, "Quarantined volumes")`);
    this.name = 'StorageOccupiedError';
  }
}
