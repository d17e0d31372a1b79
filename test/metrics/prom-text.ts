// Test helper: a small reader of the Prometheus text format, so tests compare figures rather than strings.

/** One sample line: metric name, labels and value. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** Parses every sample of an exposition; throws on a line it does not understand. */
export function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const m = LINE.exec(line);
    if (!m) throw new Error(`unparseable exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(LABEL)) {
      labels[l[1]!] = l[2]!.replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\');
    }
    const v = m[3]!;
    const value = v === '+Inf' ? Infinity : v === '-Inf' ? -Infinity : Number(v);
    samples.push({ name: m[1]!, labels, value });
  }
  return samples;
}

/** The value of the one sample with this name whose labels include `labels`; throws if none or several. */
export function sampleValue(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  const found = findSamples(samples, name, labels);
  if (found.length !== 1) {
    throw new Error(`expected one sample ${name}${JSON.stringify(labels)}, found ${found.length}`);
  }
  return found[0]!.value;
}

/** Every sample with this name whose labels include `labels`. */
export function findSamples(samples: Sample[], name: string, labels: Record<string, string> = {}): Sample[] {
  return samples.filter(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
}
