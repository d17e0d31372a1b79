// The pod reservations of this node: space promised to a pod's claims whose CreateVolume has not come yet, kept in memory only.
import type { SpaceHolds } from '../../../catalog/space-ledger.js';

export interface Reservation {
  /** `namespace/name` of the claim it is held for; that claim's CreateVolume carries the same. */
  claim: string;
  /** `namespace/name` of the pod whose other claim reserved it. */
  pod: string;
  /** A pod made again under the same name is another pod, whose reservations these are not. */
  podUid: string;
  pool: string;
  bytes: number;
  /**
   * `claim`: space the claim's CreateVolume will take, held against every other create.
   * `steer`: a claim of a pod refused here, held back only from the capacity GetCapacity
   * reports, so the scheduler sends the pod elsewhere; creates do not see it.
   */
  kind: 'claim' | 'steer';
  /** Wall-clock milliseconds at which it lapses. */
  expiresAtMs: number;
}

export type NewReservation = Omit<Reservation, 'expiresAtMs'>;

/**
 * One reservation per claim at most: a later create for the same pod replaces it (so a
 * pod's claims are never counted twice) and starts its time again. Lapsed ones are dropped
 * whenever the book is read, so no timer is needed.
 */
export class ReservationBook implements SpaceHolds {
  private readonly byClaim = new Map<string, Reservation>();

  constructor(readonly ttlMs: number, private readonly now: () => number = Date.now) {}

  heldBytes(pool: string, except: ReadonlySet<string>): number {
    let held = 0;
    for (const r of this.live()) if (r.kind === 'claim' && r.pool === pool && !except.has(r.claim)) held += r.bytes;
    return held;
  }

  /** What refused pods hold back from the reported capacity of `pool`. */
  steeringBytes(pool: string): number {
    let held = 0;
    for (const r of this.live()) if (r.kind === 'steer' && r.pool === pool) held += r.bytes;
    return held;
  }

  /** Every reservation that has not lapsed, oldest first. */
  live(): Reservation[] {
    const now = this.now();
    for (const [claim, r] of this.byClaim) if (r.expiresAtMs <= now) this.byClaim.delete(claim);
    return [...this.byClaim.values()];
  }

  get(claim: string): Reservation | undefined {
    return this.live().find((r) => r.claim === claim);
  }

  /** Holds space for each; a claim already held is held anew (its pod's newest view wins). */
  hold(reservations: readonly NewReservation[]): void {
    const expiresAtMs = this.now() + this.ttlMs;
    for (const r of reservations) {
      this.byClaim.delete(r.claim);
      this.byClaim.set(r.claim, { ...r, expiresAtMs });
    }
  }

  /** The claim's own CreateVolume takes its space: the reservation ends, its bytes become the volume's. */
  release(claim: string): Reservation | undefined {
    const r = this.byClaim.get(claim);
    this.byClaim.delete(claim);
    return r;
  }

  /** Drops every reservation of one pod (it is gone, or went to another node); returns how many. */
  releasePod(pod: string, podUid: string): number {
    let n = 0;
    for (const [claim, r] of this.byClaim) {
      if (r.pod === pod && r.podUid === podUid) {
        this.byClaim.delete(claim);
        n++;
      }
    }
    return n;
  }
}
