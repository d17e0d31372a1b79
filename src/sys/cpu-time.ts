// CPU time read from /proc: one process's (with or without the children it reaped), and the whole machine's.
import { readFileSync } from 'node:fs';

/** Clock ticks a second in /proc's figures (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

/**
 * CPU milliseconds (user + system, all threads) of `pid`, and with `children` also those of
 * the children it has reaped. Fields 14-17 of stat (utime, stime, cutime, cstime; indexes
 * 11-14 once the pid and the parenthesised name are cut).
 */
export function processCpuMs(pid: number | 'self', children = false): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
  return (children ? [11, 12, 13, 14] : [11, 12]).reduce((sum, i) => sum + Number(fields[i]), 0) * (1000 / TICKS_PER_SECOND);
}

/**
 * CPU milliseconds the machine has spent busy since boot, summed over its CPUs: every
 * process and the kernel's own work (user, nice, system, irq, softirq and steal in the first
 * line of /proc/stat; idle and iowait left out).
 */
export function machineCpuMs(): number {
  const cpu = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = cpu;
  return (user + nice + system + irq + softirq + steal) * (1000 / TICKS_PER_SECOND);
}
