// Processes found in /proc: a process's children by name (how tests and benchmarks find the tool helper a process started), or any process by its command line.
import { readFileSync, readdirSync } from 'node:fs';

/** Each pid in /proc with what `read` makes of its file `name` (stat, cmdline); processes gone meanwhile are skipped. */
function scan<T>(name: string, read: (text: string) => T): Array<[number, T]> {
  const out: Array<[number, T]> = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      out.push([Number(entry), read(readFileSync(`/proc/${entry}/${name}`, 'utf8'))]);
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** The pids of `parent`'s children whose command name (stat's comm) is `comm`. */
export function childrenNamed(comm: string, parent = process.pid): number[] {
  return scan('stat', (text) => /^\d+ \((.*)\) \S (\d+) /.exec(text))
    .filter(([, m]) => m !== null && m[1] === comm && Number(m[2]) === parent)
    .map(([pid]) => pid);
}

/** The pids of the processes whose arguments (argv[0] first) pass `test`. */
export function processesWhoseArgs(test: (argv: string[]) => boolean): number[] {
  return scan('cmdline', (text) => text.split('\0')).filter(([, argv]) => test(argv)).map(([pid]) => pid);
}
