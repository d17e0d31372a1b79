// Kubernetes resource quantities ("64Mi", "500m", "1.5G") parsed to numbers and formatted back.

const BINARY: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };
const DECIMAL: Record<string, number> = { n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 };
const PATTERN = /^([+-]?[0-9]+(?:\.[0-9]*)?|[+-]?\.[0-9]+)(?:([eE][+-]?[0-9]+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)$/;

/** The value of a quantity in base units (bytes, cores, pods); throws on malformed input. */
export function parseQuantity(input: string | number): number {
  if (typeof input === 'number') {
    if (!Number.isFinite(input)) throw new Error(`invalid quantity ${input}`);
    return input;
  }
  const m = PATTERN.exec(input.trim());
  if (m === null) throw new Error(`invalid quantity "${input}"`);
  const base = Number(m[1]);
  if (m[2] !== undefined) return base * 10 ** Number(m[2].slice(1));
  const suffix = m[3] ?? '';
  const factor = BINARY[suffix] ?? DECIMAL[suffix];
  if (factor === undefined) throw new Error(`invalid quantity suffix in "${input}"`);
  return base * factor;
}

/** Whether a quantity parses. */
export function isQuantity(input: unknown): boolean {
  if (typeof input !== 'string' && typeof input !== 'number') return false;
  try { parseQuantity(input); return true; } catch { return false; }
}

/** Bytes as the largest binary suffix that divides them exactly ("64Mi"), else plain bytes. */
export function formatBytesQuantity(bytes: number): string {
  for (const suffix of ['Ei', 'Pi', 'Ti', 'Gi', 'Mi', 'Ki']) {
    const f = BINARY[suffix]!;
    if (bytes !== 0 && bytes % f === 0) return `${bytes / f}${suffix}`;
  }
  return String(Math.round(bytes));
}

/** Bytes for humans: "1.5Gi", "300Mi", "12Ki". */
export function humanBytes(bytes: number): string {
  const abs = Math.abs(bytes);
  for (const suffix of ['Ti', 'Gi', 'Mi', 'Ki']) {
    const f = BINARY[suffix]!;
    if (abs >= f) {
      const v = bytes / f;
      return `${Number.isInteger(v) ? v : v.toFixed(1)}${suffix}`;
    }
  }
  return `${bytes}B`;
}
