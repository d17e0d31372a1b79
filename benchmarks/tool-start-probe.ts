// Run as a child by the driver benchmark's part (g): starts a tool many times through the tool seam, prints wall and CPU per tool as JSON.
import { readFileSync } from 'node:fs';
import { run } from '../src/sys/exec.js';
import { childrenNamed } from '../test/helpers/child-processes.js';

/** utime + stime + cutime + cstime of a process, in milliseconds: its own CPU and that of the children it reaped. */
function cpuWithChildrenMs(pid: number | 'self'): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
  // Fields 14-17 of stat (indexes 11-14 once pid and name are cut), in clock ticks of 10 ms (USER_HZ 100).
  return [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0) * 10;
}

const count = Number(process.argv[2] ?? '200');
await run('true', []); // the helper's own start is not a tool's
// The tool helper serving this process, if tools go through one.
const helper = childrenNamed('perl')[0];
const cpu0 = cpuWithChildrenMs('self') + (helper === undefined ? 0 : cpuWithChildrenMs(helper));
const own0 = process.cpuUsage();
const t0 = performance.now();
for (let i = 0; i < count; i++) await run('true', []);
const wallMs = performance.now() - t0;
// The caller's own CPU (what a driver's event loop would lose), in microseconds.
const own = process.cpuUsage(own0);
const cpuMs = cpuWithChildrenMs('self') + (helper === undefined ? 0 : cpuWithChildrenMs(helper)) - cpu0;
console.log(JSON.stringify({ helper: helper !== undefined, wallMs: wallMs / count, cpuMs: cpuMs / count, ownCpuMs: (own.user + own.system) / 1000 / count }));
