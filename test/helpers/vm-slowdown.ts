// Test support: stretches a test's deadlines by how much slower than usual the test VM runs (LODE_VM_SLOWDOWN, measured at its boot), so a loaded host gives slow passes, not failures.

/**
 * How many times slower than the reference the test VM's emulator runs: LODE_VM_SLOWDOWN, which the
 * VM's job script sets (test/vm/slowdown.ts); 1 outside the VM.
 */
export function vmSlowdown(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.LODE_VM_SLOWDOWN;
  if (raw === undefined || raw === '') return 1;
  const n = Number(raw);
  if (!/^\d+(\.\d+)?$/.test(raw) || !(n >= 1)) {
    throw new Error(`LODE_VM_SLOWDOWN="${raw}" must be a number of at least 1 (how many times slower than usual the test VM runs)`);
  }
  return n;
}

/** A bound against a hang (not a speed check), stretched by the VM's slowdown. */
export function scaledDeadlineMs(ms: number, env: NodeJS.ProcessEnv = process.env): number {
  return Math.ceil(ms * vmSlowdown(env));
}
