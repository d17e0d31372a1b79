// Ctrl-C and SIGTERM for the benchmarks that run clusters: the first ends the run through its teardown, a second stops its drivers at once.
import type { Cluster } from '../src/bench/cluster/cluster.js';

/** What a benchmark passes to runScenario, and what it calls when it is done. */
export interface Interrupts {
  /** Aborted by the first signal: the run stops and tears down as it would at its end. */
  readonly signal: AbortSignal;
  /** Keeps the run's cluster for a second signal's emergency stop. */
  onCluster(cluster: Cluster): void;
  /** Gives the signals back to Node.js's default handling. */
  dispose(): void;
}

/**
 * Without handlers a killed benchmark left its drivers, their loop devices and its work
 * directory behind (a killed 100-node run left 56 loop devices). The first SIGINT or SIGTERM
 * aborts the run, whose teardown then removes all of it; a second kills the drivers and sweeps
 * the work directory, then exits with 130.
 */
function interrupts(name: string): Interrupts {
  const abort = new AbortController();
  let cluster: Cluster | undefined;
  const on = (): void => {
    if (!abort.signal.aborted) {
      process.stderr.write(`\n${name}: interrupted, cleaning up (again to force)\n`);
      abort.abort();
      return;
    }
    void (cluster?.emergencyStop() ?? Promise.resolve()).finally(() => process.exit(130));
  };
  process.on('SIGINT', on);
  process.on('SIGTERM', on);
  return {
    signal: abort.signal,
    onCluster: (c) => { cluster = c; },
    dispose: () => {
      process.off('SIGINT', on);
      process.off('SIGTERM', on);
    },
  };
}

/** What interruptible answers when a signal ended the work. */
export const INTERRUPTED = Symbol('interrupted');

/**
 * Runs `work` (the benchmark's runs, each given `stop.signal` and `stop.onCluster`) with the
 * handlers above in place, and gives the signals back after. Work that throws because a signal
 * aborted it answers INTERRUPTED, its reason printed; any other throw is the caller's.
 */
export async function interruptible<T>(name: string, work: (stop: Interrupts) => Promise<T>): Promise<T | typeof INTERRUPTED> {
  const stop = interrupts(name);
  try {
    return await work(stop);
  } catch (err) {
    if (!stop.signal.aborted) throw err;
    process.stderr.write(`${name}: ${(err as Error).message}\n`);
    return INTERRUPTED;
  } finally {
    stop.dispose();
  }
}
