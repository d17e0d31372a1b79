// `lode bench` interrupted with SIGINT mid-run tears everything down: exit 130, no mounts, no loop devices, no directory.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loopsUnder, mountsUnder } from '../../src/bench/nodes/sweep.js';
import { needsRoot } from './run-helpers.js';

const MAIN = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

describe('lode bench on SIGINT', { skip: needsRoot }, () => {
  it('stops between reconciles and cleans up', async () => {
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
});
