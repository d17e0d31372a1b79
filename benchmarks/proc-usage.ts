// What a process has used, read from /proc: CPU time (its own, or with the children it reaped), resident memory and its main thread's wake-ups.
import { readFileSync } from 'node:fs';

/**
 * CPU milliseconds (user + system) of `pid`, and with `children` also those of the children it
 * has reaped. Fields 14-17 of stat (utime, stime, cutime, cstime; indexes 11-14 once pid and name
 * are cut), in clock ticks: 100 a second on Linux (USER_HZ).
 */
export function cpuMsOf(pid: number | 'self', children = false): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
  return (children ? [11, 12, 13, 14] : [11, 12]).reduce((sum, i) => sum + Number(fields[i]), 0) * 10;
}

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
