// The cluster benchmark stopped by SIGTERM mid-run tears its cluster down: exit 130, no driver, loop device or work directory left.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loopsUnder, sweep } from '../../src/bench/nodes/sweep.js';
import { processesWhoseArgs } from '../helpers/child-processes.js';
import { untilAsync } from '../helpers/until.js';
import { needsRoot } from './run-helpers.js';

const CLUSTER_BENCH = fileURLToPath(new URL('../../benchmarks/cluster-bench.js', import.meta.url));

/** Pids of the `lode driver` processes whose command line names a path under `root`. */
function driversUnder(root: string): number[] {
  return processesWhoseArgs((argv) => argv.includes('driver') && argv.some((a) => a.startsWith(`${root}/`))
    && !argv.includes('setpriv') && !argv.includes('nsenter'));
}

it('cluster bench: SIGTERM once a volume is attached ends the run through its teardown', { skip: needsRoot }, async () => {
  const root = mkdtempSync('/tmp/lode-cluster-bench-int-');
  const child = spawn(process.execPath, [CLUSTER_BENCH, '--distributed-only', '2'], { env: { ...process.env, LODE_BENCH_WORK_DIR: root }, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d: Buffer) => { err += d.toString(); });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
  try {
    // A loop device of the run: a volume staged, so there is something to undo.
    await untilAsync('a loop device of the run', async () => child.exitCode !== null || (await loopsUnder(root)).length > 0, 120_000);
    assert.equal(child.exitCode, null, `the run ended before it was interrupted: ${err}`);
    child.kill('SIGTERM');
    assert.equal(await exited, 130, err);
    assert.match(err, /cluster bench: interrupted, cleaning up/);
    assert.deepEqual(await loopsUnder(root), []);
    assert.deepEqual(driversUnder(root), []);
    assert.deepEqual(readdirSync(root), [], 'the run directory is gone');
  } finally {
    if (child.exitCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
    for (const pid of driversUnder(root)) process.kill(pid, 'SIGKILL');
    if (existsSync(root)) {
      await sweep(root).catch(() => undefined);
      rmSync(root, { recursive: true, force: true });
    }
  }
});
