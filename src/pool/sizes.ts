// Byte units and rounding to an allocation step; sizes as people write them are read in util/quantity.ts.

export const MiB = 2 ** 20;
export const GiB = 2 ** 30;

/** Rounds up to a multiple of `step`. */
export function roundUp(bytes: number, step: number): number {
  return Math.ceil(bytes / step) * step;
}
