// What an lvm pool can still hand out: the thick rule (the VG's free extents) and the thin rule (the thin pool's data and its overprovision budget).

/** Whole extents of `bytes`, rounded down: LVM allocates nothing smaller. */
export function wholeExtents(bytes: number, extentBytes: number): number {
  return bytes <= 0 ? 0 : Math.floor(bytes / extentBytes) * extentBytes;
}

export interface ThickFigures {
  /** Bytes the VG can still allocate (its free extents). */
  vgFreeBytes: number;
  extentBytes: number;
  /** Bytes of this pool's own logical volumes as they exist now. */
  ownBytes: number;
  /** Bytes the pool leaves free in the VG for everyone else (reserve=). */
  reserveBytes: number;
}

/**
 * A thick pool's capacity: its own volumes plus the free extents beyond the reserve. The
 * catalog subtracts what its ledger holds, so what is left is exactly the largest LV the VG's
 * free extents allow, less the reserve (a volume the ledger holds and LVM has not made yet is
 * still in the free extents, and counted once).
 */
export function thickCapacity(f: ThickFigures): number {
  return f.ownBytes + wholeExtents(f.vgFreeBytes - f.reserveBytes, f.extentBytes);
}

export interface ThinFigures {
  /** Size of the thin pool's data. */
  poolBytes: number;
  /** How full its data is, in percent as lvs reports it (two decimals). */
  dataPercent: number;
  extentBytes: number;
  /** Sum of the virtual sizes of the thin pool's volumes that are not this pool's (another user's, or another Lode pool's). */
  foreignVirtualBytes: number;
  overprovision: number;
  /** Bytes of the thin pool's data left unused for everyone else (reserve=). */
  reserveBytes: number;
}

/**
 * A thin pool's budget of virtual size: the thin pool's size times the overprovision ratio,
 * less what other users' thin volumes promise. The catalog subtracts the ledger (this pool's
 * virtual sizes), which is the second half of the thin rule.
 */
export function thinBudget(f: ThinFigures): number {
  return wholeExtents(Math.floor(f.poolBytes * f.overprovision) - f.foreignVirtualBytes, f.extentBytes);
}

/**
 * What the thin pool's data can still hold beyond the reserve. lvs gives the fullness to a
 * hundredth of a percent; the used part is rounded up, so the figure never promises more.
 */
export function thinDataFree(f: ThinFigures): number {
  const used = Math.ceil((f.poolBytes * f.dataPercent) / 100);
  return wholeExtents(f.poolBytes - used - f.reserveBytes, f.extentBytes);
}

/** The thin rule: the smaller of what the data can hold and what the budget still allows after the ledger. */
export function thinAvailable(f: ThinFigures, allocatedBytes: number): number {
  return Math.max(0, Math.min(thinDataFree(f), thinBudget(f) - allocatedBytes));
}
