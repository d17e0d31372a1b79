// `lode bench` interrupted with SIGINT mid-run tears everything down: exit 130, no mounts, no loop devices, no directory; killed outright, it takes its drivers with it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmdirSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loopsUnder, mountsUnder, sweep } from '../../src/bench/nodes/sweep.js';
import { until } from '../helpers/until.js';
import { processesWhoseArgs } from '../helpers/child-processes.js';
import { needsRoot } from './run-helpers.js';

const MAIN = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

/** Pids of the `lode driver` processes whose command line names a path under `root`. */
function driversUnder(root: string): number[] {
  return processesWhoseArgs((argv) => argv.includes('driver') && argv.some((a) => a.startsWith(`${root}/`))
    && !argv.includes('setpriv') && !argv.includes('nsenter'));
}

describe('lode bench interrupted', { skip: needsRoot }, () => {
  it('on SIGINT, stops between reconciles and cleans up', async () => {
    const root = mkdtempSync('/tmp/lode-bench-int-');
    const child = spawn(process.execPath, [MAIN, 'bench', '08-statefulset-scale', '--work-dir', root], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const interrupted = new Promise<void>((resolve) => {
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        // Interrupt once a pod has its volume mounted, so there is something to undo.
        if (out.includes('Started') && !child.killed) {
          child.kill('SIGINT');
          resolve();
        }
      });
    });
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
    await interrupted;
    assert.equal(code, 130);
    assert.deepEqual(await mountsUnder(root), []);
    assert.deepEqual(await loopsUnder(root), []);
    assert.deepEqual(existsSync(root) ? readdirSync(root) : [], [], 'the run directory is gone');
    if (existsSync(root)) rmdirSync(root);
  });

  it('killed outright (SIGKILL), takes its drivers with it', async () => {
    const root = mkdtempSync('/tmp/lode-bench-kill-');
    // A scenario whose drivers have no API access: nothing they watch breaks when the bench
    // dies, so an idle driver would have nothing to notice it by.
    const child = spawn(process.execPath, [MAIN, 'bench', '04-two-claims', '--work-dir', root], { stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      let out = '';
      child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
      await until('a volume provisioned', () => out.includes('ProvisioningSucceeded') || child.exitCode !== null, 120_000);
      const drivers = driversUnder(root);
      assert.ok(drivers.length > 0, 'the run has drivers running');
      const gone = new Promise((r) => child.on('exit', r));
      child.kill('SIGKILL');
      await gone;
      await until('the drivers stopped with the bench', () => driversUnder(root).length === 0, 30_000);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      for (const pid of driversUnder(root)) process.kill(pid, 'SIGKILL');
      // A killed bench cleans nothing: what its drivers left is swept here.
      await until('the last drivers gone', () => driversUnder(root).length === 0, 10_000).catch(() => undefined);
      await sweep(root);
      rmSync(root, { recursive: true, force: true });
    }
  });
});
