// Run as a child by the driver benchmark's part (g): starts a tool many times through the tool seam, prints wall and CPU per tool as JSON.
import { run } from '../src/sys/exec.js';
import { childrenNamed } from '../test/helpers/child-processes.js';
import { residentMiBOf } from './proc-usage.js';
import { processCpuMs } from '../src/sys/cpu-time.js';

const count = Number(process.argv[2] ?? '200');
await run('true', []); // the helper's own start is not a tool's
// The tool helper serving this process, if tools go through one.
const helper = childrenNamed('perl')[0];
const cpu0 = processCpuMs('self', true) + (helper === undefined ? 0 : processCpuMs(helper, true));
const own0 = process.cpuUsage();
const t0 = performance.now();
for (let i = 0; i < count; i++) await run('true', []);
const wallMs = performance.now() - t0;
// The caller's own CPU (what a driver's event loop would lose), in microseconds.
const own = process.cpuUsage(own0);
const cpuMs = processCpuMs('self', true) + (helper === undefined ? 0 : processCpuMs(helper, true)) - cpu0;
const memory = helper === undefined ? undefined : residentMiBOf(helper);
console.log(JSON.stringify({ helper: helper !== undefined, wallMs: wallMs / count, cpuMs: cpuMs / count, ownCpuMs: (own.user + own.system) / 1000 / count, helperRssMiB: memory?.rss, helperAnonMiB: memory?.anon }));
