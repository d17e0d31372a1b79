// The refusals of a pool that cannot take what is asked: no room, or more than its largest volume.
import { humanBytes } from '../util/quantity.js';

/** Raised when a pool cannot take a volume, or a volume's growth, of the asked size. */
export class PoolFullError extends Error {
  constructor(readonly pool: string, readonly requested: number, readonly available: number, what: string) {
    super(`pool ${pool} has ${humanBytes(available)} free; ${what} needs ${humanBytes(requested)}`);
    this.name = 'PoolFullError';
  }
}

/**
 * Raised when a volume, or a volume's growth, is larger than the pool's max-volume-size. A
 * create is answered RESOURCE_EXHAUSTED (another node's pool may make it), a growth
 * OUT_OF_RANGE (the volume cannot move).
 */
export class VolumeTooLargeError extends Error {
  constructor(readonly pool: string, readonly maxBytes: number, readonly requested: number, readonly growth: boolean) {
    super(`pool ${pool} makes volumes up to ${humanBytes(maxBytes)}; ${humanBytes(requested)} asked`);
    this.name = 'VolumeTooLargeError';
  }
}
