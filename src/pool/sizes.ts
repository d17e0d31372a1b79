// Parsing and printing byte sizes in the Kubernetes quantity style ("10Gi", "512Mi", "1G", "4096").

const UNITS: Record<string, number> = {
  '': 1,
  k: 1e3, K: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15,
  Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50,
};

export const MiB = 2 ** 20;
export const GiB = 2 ** 30;

/** Bytes for "10Gi", "1.5G", "4096"; throws with a readable message otherwise. */
export function parseSize(text: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([kKMGTP]i?|)\s*[bB]?\s*$/.exec(text);
  if (!m) throw new Error(`"${text}" is not a size (examples: 10Gi, 512Mi, 1073741824)`);
  const unit = UNITS[m[2] ?? ''];
  if (unit === undefined) throw new Error(`"${text}" has an unknown unit`);
  const bytes = Math.round(Number(m[1]) * unit);
  if (!Number.isSafeInteger(bytes)) throw new Error(`"${text}" is too large`);
  return bytes;
}

/** "1.5Gi" style, for messages. */
export function formatSize(bytes: number): string {
  const units: Array<[string, number]> = [['Ti', 2 ** 40], ['Gi', GiB], ['Mi', MiB], ['Ki', 1024]];
  for (const [name, size] of units) {
    if (Math.abs(bytes) >= size) {
      const v = bytes / size;
      return `${Number.isInteger(v) ? v : v.toFixed(2)}${name}`;
    }
  }
  return `${bytes}B`;
}

/** Rounds up to a multiple of `step`. */
export function roundUp(bytes: number, step: number): number {
  return Math.ceil(bytes / step) * step;
}
