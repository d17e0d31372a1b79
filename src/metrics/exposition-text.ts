// Reads the Prometheus text exposition format (0.0.4) into samples, strictly: a line it cannot read is an error naming the line, never a silent skip.

/** One sample line: metric name, labels and value (the optional timestamp is read and dropped). */
export interface ExpositionSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** A line that is not in the text format; `line` counts from 1. */
export class ExpositionError extends Error {
  override name = 'ExpositionError';
  constructor(readonly line: number, why: string) {
    super(`line ${line}: ${why}`);
  }
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/;
// Go's ParseFloat as the format uses it: decimal, exponent, NaN and signed Inf.
const FLOAT = /^[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|Inf|NaN)$/;
const TIMESTAMP = /^-?\d+$/;

/** Parses every sample of an exposition; comments (# HELP, # TYPE and others) and blank lines are skipped. */
export function parseExposition(text: string): ExpositionSample[] {
  const samples: ExpositionSample[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] ?? '').replace(/\r$/, '');
    if (/^[ \t]*(#|$)/.test(line)) continue;
    samples.push(sampleLine(line.replace(/^[ \t]+/, ''), i + 1));
  }
  return samples;
}

function sampleLine(line: string, n: number): ExpositionSample {
  const fail = (why: string): never => { throw new ExpositionError(n, `${why}: ${line.length > 120 ? `${line.slice(0, 120)}...` : line}`); };
  const name = METRIC_NAME.exec(line)?.[0];
  if (name === undefined) return fail('no metric name');
  let rest = line.slice(name.length);
  const labels: Record<string, string> = {};
  if (rest.startsWith('{')) {
    rest = rest.slice(1);
    for (;;) {
      rest = rest.replace(/^[ \t]+/, '');
      if (rest.startsWith('}')) { rest = rest.slice(1); break; }
      const label = LABEL_NAME.exec(rest)?.[0];
      if (label === undefined) return fail('a label name was expected');
      rest = rest.slice(label.length).replace(/^[ \t]+/, '');
      if (!/^=[ \t]*"/.test(rest)) return fail(`label ${label} has no quoted value`);
      rest = rest.slice(rest.indexOf('"') + 1);
      let value = '';
      let closed = false;
      while (rest.length > 0) {
        const c = rest[0];
        if (c === '"') { closed = true; rest = rest.slice(1); break; }
        if (c === '\\') {
          const e = rest[1];
          if (e === 'n') value += '\n';
          else if (e === '\\' || e === '"') value += e;
          else return fail(`label ${label}: unknown escape \\${e ?? ''}`);
          rest = rest.slice(2);
          continue;
        }
        value += c;
        rest = rest.slice(1);
      }
      if (!closed) return fail(`label ${label}: the value is not closed`);
      if (Object.hasOwn(labels, label)) return fail(`label ${label} given twice`);
      labels[label] = value;
      rest = rest.replace(/^[ \t]+/, '');
      if (rest.startsWith(',')) { rest = rest.slice(1); continue; }
      if (!rest.startsWith('}')) return fail('"," or "}" was expected after a label');
    }
  }
  if (!/^[ \t]/.test(rest)) return fail('no value after the metric');
  const fields = rest.trim().split(/[ \t]+/);
  if (fields.length > 2) return fail('more than a value and a timestamp');
  const [v, ts] = fields;
  if (v === undefined || !FLOAT.test(v)) return fail(`"${v ?? ''}" is not a number`);
  if (ts !== undefined && !TIMESTAMP.test(ts)) return fail(`"${ts}" is not a timestamp in milliseconds`);
  const value = v.endsWith('Inf') ? (v.startsWith('-') ? -Infinity : Infinity) : Number(v);
  return { name, labels, value };
}
