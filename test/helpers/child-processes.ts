// The children of a process found by name in /proc: how tests and benchmarks find the tool helper a process started.
import { readFileSync, readdirSync } from 'node:fs';

/** The pids of `parent`'s children whose command name (stat's comm) is `comm`. */
export function childrenNamed(comm: string, parent = process.pid): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const m = /^\d+ \((.*)\) \S (\d+) /.exec(readFileSync(`/proc/${entry}/stat`, 'utf8'));
      if (m !== null && m[1] === comm && Number(m[2]) === parent) out.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}
