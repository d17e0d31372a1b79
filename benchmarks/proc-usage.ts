// What a process has used, read from /proc: resident memory and its main thread's wake-ups (CPU time: src/sys/cpu-time.ts).
import { readFileSync } from 'node:fs';

/** Resident memory of `pid` in MiB, and the part of it that is its own (anonymous) rather than shared files. */
export function residentMiBOf(pid: number): { rss: number; anon: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 'NaN');
  return { rss: kb('VmRSS') / 1024, anon: kb('RssAnon') / 1024 };
}

/**
 * How many times the main thread of `pid` has gone to sleep and been woken (voluntary context
 * switches): an idle event loop's wake-ups, each a timer or I/O it served.
 */
export function wakeupsOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/task/${pid}/status`, 'utf8');
  return Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(status)?.[1] ?? 'NaN');
}
