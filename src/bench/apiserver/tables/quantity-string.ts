// Resource quantities in the canonical form the API server prints them ("1Gi" for "1024Mi", "500m" for "0.5").

const PATTERN = /^([+-]?)([0-9]*)(?:\.([0-9]*))?(?:([eE][+-]?[0-9]+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]))?$/;
const BINARY = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];
const DECIMAL: Record<number, string> = { [-9]: 'n', [-6]: 'u', [-3]: 'm', 0: '', 3: 'k', 6: 'M', 9: 'G', 12: 'T', 15: 'P', 18: 'E' };
const DECIMAL_EXP: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };

type Format = 'BinarySI' | 'DecimalSI' | 'DecimalExponent';

/** value = mantissa * 10^exp10 * 1024^exp1024, exact. */
interface Parsed { mantissa: bigint; exp10: number; exp1024: number; format: Format }

function parse(s: string): Parsed | undefined {
  const m = PATTERN.exec(s.trim());
  if (m === null || (m[2] === '' && (m[3] ?? '') === '')) return undefined;
  const frac = m[3] ?? '';
  let mantissa = BigInt(`${m[2]}${frac}` || '0');
  if (m[1] === '-') mantissa = -mantissa;
  let exp10 = -frac.length;
  if (m[4] !== undefined) return { mantissa, exp10: exp10 + Number(m[4].slice(1)), exp1024: 0, format: 'DecimalExponent' };
  const suffix = m[5] ?? '';
  const bin = BINARY.indexOf(suffix);
  if (bin > 0) return { mantissa, exp10, exp1024: bin, format: 'BinarySI' };
  exp10 += DECIMAL_EXP[suffix]!;
  return { mantissa, exp10, exp1024: 0, format: 'DecimalSI' };
}

/** An exact integer value, when the quantity is one. */
function integerValue(p: Parsed): bigint | undefined {
  let v = p.mantissa * 1024n ** BigInt(p.exp1024);
  if (p.exp10 >= 0) return v * 10n ** BigInt(p.exp10);
  const d = 10n ** BigInt(-p.exp10);
  return v % d === 0n ? v / d : undefined;
}

/** mantissa * 10^exp with exp a multiple of 3 in [-9, 18], rounding up below nano as Go does. */
function base10(p: Parsed): { m: bigint; e: number } {
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
 * resource.Quantity's String(): binary quantities of 1024 or more keep the largest binary
 * suffix that divides them exactly, others take SI suffixes in steps of 1000 (exponent form
 * stays exponent form). Anything that does not parse is shown as given.
 */
export function quantityString(value: unknown): string {
  if (typeof value === 'number') value = String(value);
  if (typeof value !== 'string') return '';
  const p = parse(value);
  if (p === undefined) return value;
  if (p.mantissa === 0n) return '0';
  let format = p.format;
  const int = integerValue(p);
  if (format === 'BinarySI') {
    if (int === undefined || (int > -1024n && int < 1024n)) format = 'DecimalSI';
    else {
      let n = int;
      let i = 0;
      while (i < BINARY.length - 1 && n % 1024n === 0n) { n /= 1024n; i++; }
      return `${n}${BINARY[i]}`;
    }
  }
  const { m, e } = base10(p);
  if (format === 'DecimalExponent') return e === 0 ? `${m}` : `${m}e${e}`;
  return `${m}${DECIMAL[e]}`;
}
