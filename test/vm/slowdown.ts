// Measures the test VM's emulator at boot (a fixed shell loop, timed in the guest) against its time on
// an unloaded reference host, so per-file bounds and the tests' own deadlines stretch on a loaded host.

/** Iterations of the timed loop: 0.3-0.7 s under emulation on the 2-core machine, some 12 ms natively. */
export const SPEED_LOOP_ITERATIONS = 15_000;
/**
 * The loop's time in the guest at the speed the bounds were written for: near the quick end of what
 * five boots on the project's 2-core machine measured on 2026-12-06 (300, 341, 414, 454 and 728 ms,
 * `npm run test:vm`'s "speed loop" diagnostic, while other engineers' jobs shared the machine).
 * A guest at or under it gets factor 1.
 */
export const REFERENCE_LOOP_MS = 400;
/** A bound stretched further than this no longer catches a hang in reasonable time. */
export const MAX_SLOWDOWN = 8;

/** The guest's console line with the measurement; group 1 is the loop's ms, group 2 the factor in thousandths. */
export const SLOWDOWN_MARK = /@@lode-vm slowdown loop_ms=(\d+) permille=(\d+)@@/;

/**
 * Shell (dash) that defines lode_slowdown_permille LOOP_MS: the factor in thousandths, at least
 * 1000 and at most MAX_SLOWDOWN * 1000. Integer arithmetic, as the shell has no other.
 */
export function slowdownFunction(referenceMs = REFERENCE_LOOP_MS, max = MAX_SLOWDOWN): string {
  return [
    'lode_slowdown_permille() {',
    `  p=$(( $1 * 1000 / ${referenceMs} ))`,
    '  [ "$p" -lt 1000 ] && p=1000',
    `  [ "$p" -gt ${max * 1000} ] && p=${max * 1000}`,
    '  echo "$p"',
    '}',
  ].join('\n');
}

/**
 * Job-script lines that time the loop, set lode_permille and export LODE_VM_SLOWDOWN ("1.250") for
 * the tests (test/helpers/vm-slowdown.ts), and print SLOWDOWN_MARK for the host.
 */
export function slowdownProbe(): string[] {
  return [
    slowdownFunction(),
    'lode_t0=$(date +%s%N)',
    `i=0; while [ "$i" -lt ${SPEED_LOOP_ITERATIONS} ]; do i=$((i + 1)); done`,
    'lode_loop_ms=$(( ($(date +%s%N) - lode_t0) / 1000000 ))',
    'lode_permille=$(lode_slowdown_permille "$lode_loop_ms")',
    'export LODE_VM_SLOWDOWN="$((lode_permille / 1000)).$(printf %03d $((lode_permille % 1000)))"',
    'echo "@@lode-vm slowdown loop_ms=$lode_loop_ms permille=$lode_permille@@"',
  ];
}

/** The guest's bound for one file, in whole seconds, as the job script computes it from the base bound. */
export function guestFileSeconds(baseSeconds: number, permille: number): number {
  return Math.floor((baseSeconds * permille) / 1000);
}

/** How long the host waits for one file's end marker: the guest's bound plus a margin for its kill grace and a slow start. */
export function hostFileWaitMs(baseMs: number, permille: number): number {
  return guestFileSeconds(Math.ceil(baseMs / 1000), permille) * 1000 + 30_000;
}
