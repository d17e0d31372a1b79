// Kubernetes resource quantities ("10Gi", "500m", "1.5G", "1e3"): read as numbers or whole bytes, and printed as the API server and people print them.

/** The suffixes Kubernetes accepts: binary ones are powers of 1024, decimal ones powers of 1000 (m, u, n below 1). */
const BINARY_SUFFIXES = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];
const DECIMAL_EXP: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const DECIMAL_SUFFIX: Record<number, string> = Object.fromEntries(Object.entries(DECIMAL_EXP).map(([s, e]) => [e, s]));
const PATTERN = /^([+-]?)([0-9]*)(?:\.([0-9]*))?(?:([eE][+-]?[0-9]+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]))?$/;

/** What a byte-size error names, so that "10GB" or "512K" is met with the spelling that works. */
const ACCEPTED_UNITS = 'a Kubernetes quantity: a number with no unit (bytes) or one of Ki, Mi, Gi, Ti, Pi, Ei (powers of 1024) or k, M, G, T, P, E (powers of 1000), e.g. 10Gi, 512Mi, 1073741824';

type Format = 'BinarySI' | 'DecimalSI' | 'DecimalExponent';

/** One quantity as written: its number text, digits and unit. */
interface Written {
  /** The number before the unit, as given ("1.5", ".5", "+2."). */
  number: string;
  negative: boolean;
  whole: string;
  fraction: string;
  /** "e3" style, when the quantity is in exponent form. */
  exponent: string | undefined;
  suffix: string;
}

function written(text: string): Written | undefined {
  const m = PATTERN.exec(text.trim());
  if (m === null) return undefined;
  const whole = m[2] ?? '';
  const fraction = m[3] ?? '';
  if (whole === '' && fraction === '') return undefined;
  const number = text.trim().slice(0, m[0].length - (m[4] ?? m[5] ?? '').length);
  return { number, negative: m[1] === '-', whole, fraction, exponent: m[4], suffix: m[5] ?? '' };
}

/** value = mantissa * 10^exp10 * 1024^exp1024, exact. */
interface Exact { mantissa: bigint; exp10: number; exp1024: number; format: Format }

function exact(w: Written): Exact {
  let mantissa = BigInt(`${w.whole}${w.fraction}` || '0');
  if (w.negative) mantissa = -mantissa;
  const exp10 = -w.fraction.length;
  if (w.exponent !== undefined) return { mantissa, exp10: exp10 + Number(w.exponent.slice(1)), exp1024: 0, format: 'DecimalExponent' };
  const bin = BINARY_SUFFIXES.indexOf(w.suffix);
  if (bin > 0) return { mantissa, exp10, exp1024: bin, format: 'BinarySI' };
  return { mantissa, exp10: exp10 + DECIMAL_EXP[w.suffix]!, exp1024: 0, format: 'DecimalSI' };
}

/** The value of a quantity in base units (bytes, cores, pods), as a floating-point number; throws on malformed input. */
export function parseQuantity(input: string | number): number {
  if (typeof input === 'number') {
    if (!Number.isFinite(input)) throw new Error(`invalid quantity ${input}`);
    return input;
  }
  const w = written(input);
  if (w === undefined) throw new Error(`invalid quantity "${input}"`);
  const base = Number(w.number);
  if (w.exponent !== undefined) return base * 10 ** Number(w.exponent.slice(1));
  const bin = BINARY_SUFFIXES.indexOf(w.suffix);
  return base * (bin > 0 ? 1024 ** bin : 10 ** DECIMAL_EXP[w.suffix]!);
}

/** Whether a quantity parses. */
export function isQuantity(input: unknown): boolean {
  if (typeof input !== 'string' && typeof input !== 'number') return false;
  try { parseQuantity(input); return true; } catch { return false; }
}

/**
 * Whole bytes for a size a person or the API gave ("10Gi", "1.5G", "4096"), rounded up as
 * Kubernetes rounds a quantity to an integer. Throws a message naming the accepted units for
 * anything else ("10GB", "512K", "lots"), for negative sizes and for sizes past 2^53.
 */
export function parseBytes(text: string): number {
  const w = written(text);
  if (w === undefined) throw new Error(`"${text}" is not a size: give ${ACCEPTED_UNITS}`);
  const q = exact(w);
  if (q.mantissa < 0n) throw new Error(`"${text}" is not a size: it is negative`);
  let v = q.mantissa * 1024n ** BigInt(q.exp1024);
  if (q.exp10 >= 0) v *= 10n ** BigInt(q.exp10);
  else {
    const d = 10n ** BigInt(-q.exp10);
    v = (v + d - 1n) / d;
  }
  if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error(`"${text}" is too large`);
  return Number(v);
}

/** An exact integer value, when the quantity is one. */
function integerValue(p: Exact): bigint | undefined {
  const v = p.mantissa * 1024n ** BigInt(p.exp1024);
  if (p.exp10 >= 0) return v * 10n ** BigInt(p.exp10);
  const d = 10n ** BigInt(-p.exp10);
  return v % d === 0n ? v / d : undefined;
}

/** mantissa * 10^exp with exp a multiple of 3 in [-9, 18], rounding up below nano as Go does. */
function base10(p: Exact): { m: bigint; e: number } {
  let m = p.mantissa * 1024n ** BigInt(p.exp1024);
  let e = p.exp10;
  while (m !== 0n && m % 10n === 0n) { m /= 10n; e++; }
  if (e < -9) {
    const d = 10n ** BigInt(-9 - e);
    m = m >= 0n ? (m + d - 1n) / d : m / d;
    e = -9;
  }
  while (e % 3 !== 0) { m *= 10n; e--; }
  while (e > 18) { m *= 1000n; e -= 3; }
  return { m, e };
}

/**
 * resource.Quantity's String(), the canonical form the API server prints ("1Gi" for "1024Mi",
 * "500m" for "0.5"): binary quantities of 1024 or more keep the largest binary suffix that
 * divides them exactly, others take SI suffixes in steps of 1000 (exponent form stays
 * exponent form). Anything that does not parse is shown as given.
 */
export function quantityString(value: unknown): string {
  if (typeof value === 'number') value = String(value);
  if (typeof value !== 'string') return '';
  const w = written(value);
  if (w === undefined) return value;
  const p = exact(w);
  if (p.mantissa === 0n) return '0';
  let format = p.format;
  const int = integerValue(p);
  if (format === 'BinarySI') {
    if (int === undefined || (int > -1024n && int < 1024n)) format = 'DecimalSI';
    else {
      let n = int;
      let i = 0;
      while (i < BINARY_SUFFIXES.length - 1 && n % 1024n === 0n) { n /= 1024n; i++; }
      return `${n}${BINARY_SUFFIXES[i]}`;
    }
  }
  const { m, e } = base10(p);
  if (format === 'DecimalExponent') return e === 0 ? `${m}` : `${m}e${e}`;
  return `${m}${DECIMAL_SUFFIX[e]}`;
}

/** Bytes as the largest binary suffix that divides them exactly ("64Mi"), else plain bytes: what a provisioner writes as a PV's capacity. */
export function formatBytesQuantity(bytes: number): string {
  for (let i = BINARY_SUFFIXES.length - 1; i > 0; i--) {
    const f = 1024 ** i;
    if (bytes !== 0 && bytes % f === 0) return `${bytes / f}${BINARY_SUFFIXES[i]}`;
  }
  return String(Math.round(bytes));
}

/** Bytes for people, in messages and reports: "1.50Gi", "300Mi", "12Ki", "512B". */
export function humanBytes(bytes: number): string {
  for (let i = 4; i > 0; i--) {
    const f = 1024 ** i;
    if (Math.abs(bytes) >= f) {
      const v = bytes / f;
      return `${Number.isInteger(v) ? v : v.toFixed(2)}${BINARY_SUFFIXES[i]}`;
    }
  }
  return `${bytes}B`;
}
