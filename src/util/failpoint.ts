// Crash injection for tests: when LODE_FAILPOINT names a point, the process kills itself there with SIGKILL.
// Off unless the variable is set; it lets the crash tests stop the driver between any two steps of a call.

const armed = process.env.LODE_FAILPOINT ?? '';

export function failpoint(name: string): void {
  if (armed !== '' && armed === name) process.kill(process.pid, 'SIGKILL');
}
