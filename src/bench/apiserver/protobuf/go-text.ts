// The text forms apimachinery's JSON gives times (RFC 3339, to the second or the microsecond) and durations (Go's "1m30s"), and their wire numbers.
import { ProtobufError } from './protobuf-error.js';

// Go durations ("1m30s") as apimachinery's Duration prints them in JSON.
const UNITS: [string, number][] = [['h', 3600e9], ['m', 60e9], ['s', 1e9], ['ms', 1e6], ['us', 1e3], ['µs', 1e3], ['ns', 1]];

export function parseDuration(text: string): number {
  if (text === '0') return 0;
  const re = /(\d+(?:\.\d+)?)(h|ms|m|s|us|µs|ns)/gy;
  let total = 0;
  let m: RegExpExecArray | null;
  const sign = text.startsWith('-') ? -1 : 1;
  const body = text.replace(/^[-+]/, '');
  let consumed = 0;
  while ((m = re.exec(body)) !== null) {
    total += Number(m[1]) * UNITS.find(([u]) => u === m![2])![1];
    consumed = re.lastIndex;
  }
  if (consumed !== body.length || body === '') throw new ProtobufError(`invalid duration ${JSON.stringify(text)}`);
  return sign * Math.round(total);
}

export function formatDuration(ns: number): string {
  if (ns === 0) return '0s';
  const sign = ns < 0 ? '-' : '';
  let n = Math.abs(ns);
  if (n < 1e9) {
    if (n < 1e3) return `${sign}${n}ns`;
    if (n < 1e6) return `${sign}${n / 1e3}µs`;
    return `${sign}${n / 1e6}ms`;
  }
  const h = Math.floor(n / 3600e9); n -= h * 3600e9;
  const m = Math.floor(n / 60e9); n -= m * 60e9;
  const s = n / 1e9;
  return `${sign}${h > 0 ? `${h}h` : ''}${h > 0 || m > 0 ? `${m}m` : ''}${s}s`;
}

// Times: RFC 3339 text in JSON, {seconds, nanos} on the wire.
export function parseTime(text: string, micro: boolean): { seconds: number; nanos: number } {
  const ms = Date.parse(text);
  if (!Number.isFinite(ms)) throw new ProtobufError(`invalid time ${JSON.stringify(text)}`);
  const seconds = Math.floor(ms / 1000);
  if (!micro) return { seconds, nanos: 0 };
  const frac = /\.(\d+)/.exec(text)?.[1] ?? '';
  return { seconds, nanos: Number((frac + '000000').slice(0, 6)) * 1000 };
}

export function formatTime(seconds: number, nanos: number, micro: boolean): string {
  const base = new Date(seconds * 1000).toISOString().slice(0, 19);
  return micro ? `${base}.${String(Math.floor(nanos / 1000)).padStart(6, '0')}Z` : `${base}Z`;
}

