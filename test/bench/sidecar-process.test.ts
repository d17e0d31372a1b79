// The supervision of real sidecar processes: logs kept, an unexpected exit restarted with backoff and counted, stop reaps, and each process gets its pod's hostname.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import * as path from 'node:path';
import { hostname } from 'node:os';
import { spawn } from 'node:child_process';
import { SidecarProcess } from '../../src/bench/sidecars/sidecar-process.js';
import { needsRoot } from './run-helpers.js';
import { alive, until } from '../helpers/until.js';

const MODULE = new URL('../../src/bench/sidecars/sidecar-process.js', import.meta.url).href;

describe('a supervised sidecar process', { skip: needsRoot }, () => {
  it('dies with the process that supervises it, even when that one is SIGKILLed', async () => {
    const dir = mkdtempSync('/tmp/lode-sidecar-process-');
    let sidecar: number | undefined;
    try {
      // A bench stand-in: supervises one sidecar (with a pod hostname, as the bench runs them), says its pid, then waits to be killed.
      const script = `import { SidecarProcess } from ${JSON.stringify(MODULE)};
        const p = new SidecarProcess({ name: 'sleeper/n1', binary: 'sh', args: ['-c', 'echo up; exec sleep 300'], env: {}, logFile: ${JSON.stringify(path.join(dir, 'z.log'))}, hostname: 'lode-node-n1' });
        p.start();
        console.log(p.pid);
        setInterval(() => {}, 1000);`;
      const bench = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      bench.stdout.on('data', (d: Buffer) => { out += d.toString(); });
      await until('the sidecar started', () => /^\d+\n/.test(out) && existsSync(path.join(dir, 'z.log')) && readFileSync(path.join(dir, 'z.log'), 'utf8').includes('up'));
      sidecar = Number(out.trim());
      assert.ok(alive(sidecar), 'the sidecar runs');
      const gone = new Promise((r) => bench.on('exit', r));
      bench.kill('SIGKILL');
      await gone;
      await until('the sidecar died with its supervisor', () => !alive(sidecar!), 10_000);
    } finally {
      if (sidecar !== undefined && alive(sidecar)) process.kill(sidecar, 'SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('restarts after an unexpected exit, counts it, keeps its output in the log, and stop() ends it for good', async () => {
    const dir = mkdtempSync('/tmp/lode-sidecar-process-');
    try {
      const log = path.join(dir, 'x.log');
      const exits: string[] = [];
      const p = new SidecarProcess({ name: 'crasher/n1', binary: 'sh', args: ['-c', 'echo started; exit 3'], env: {}, logFile: log }, (_s, how) => exits.push(how));
      p.start();
      await until('two restarts', () => p.restarts >= 2);
      await p.stop();
      const after = p.restarts;
      await new Promise((r) => setTimeout(r, 2500));
      assert.equal(p.restarts, after, 'no restart after stop()');
      assert.ok(exits.every((e) => e === 'exited (code 3)'), exits.join(', '));
      assert.ok((readFileSync(log, 'utf8').match(/started/g) ?? []).length >= 2, 'every run\'s output appended to the one log');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('an exit after its driver was killed, and every exit while the driver is down, is the driver\'s; after it is back, only the first exit is', async () => {
    const dir = mkdtempSync('/tmp/lode-sidecar-process-');
    try {
      const exits: Array<{ how: string; withDriver: boolean }> = [];
      // A provisioner that cannot reach its driver: it exits at once, each time it is started.
      const p = new SidecarProcess({ name: 'provisioner/n1', binary: 'sh', args: ['-c', 'exit 1'], env: {}, logFile: path.join(dir, 'p.log') }, (_s, how, withDriver) => exits.push({ how, withDriver }));
      p.expectExitWithDriver();
      p.start();
      await until('two exits while the driver is down', () => exits.length >= 2);
      p.driverBack();
      const back = exits.length;
      await until('an exit after the driver is back', () => exits.length > back);
      await p.stop();
      assert.ok(exits.slice(0, back).every((e) => e.withDriver), `every exit while the driver was down is the driver's: ${JSON.stringify(exits)}`);
      assert.equal(exits[back]?.withDriver, false, 'one after it is back, with the loss already seen, is the sidecar\'s own');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a process started while its driver was down that gives up connecting just after the driver is back exits for the driver; one started after it is back exits on its own', async () => {
    const dir = mkdtempSync('/tmp/lode-sidecar-process-');
    try {
      const exits: Array<{ how: string; withDriver: boolean }> = [];
      // 09's csi-provisioner: restarted while the driver is down, it waits out its connect deadline, which ends just after the driver returns.
      const p = new SidecarProcess({ name: 'provisioner/n1', binary: 'sh', args: ['-c', 'sleep 1; exit 1'], env: {}, logFile: path.join(dir, 'p.log') }, (_s, how, withDriver) => exits.push({ how, withDriver }));
      p.expectExitWithDriver();
      p.start();
      await until('the lost connection\'s exit', () => exits.length >= 1);
      await until('a process started while the driver is down', () => p.running);
      p.driverBack();
      await until('its exit, after the driver is back', () => exits.length >= 2);
      await until('an exit of a process started after the driver was back', () => exits.length >= 3);
      await p.stop();
      assert.deepEqual(exits.map((e) => e.withDriver), [true, true, false], JSON.stringify(exits));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('runs under the pod\'s hostname in a UTS namespace of its own, leaving the machine\'s alone, and stop() reaps it', async () => {
    const dir = mkdtempSync('/tmp/lode-sidecar-process-');
    try {
      const log = path.join(dir, 'y.log');
      const before = hostname();
      const p = new SidecarProcess({ name: 'sleeper/n1', binary: 'sh', args: ['-c', 'hostname; exec sleep 300'], env: {}, logFile: log, hostname: 'lode-node-n1' });
      p.start();
      await until('its hostname in the log', () => existsSync(log) && readFileSync(log, 'utf8').includes('lode-node-n1'));
      const pid = p.pid!;
      assert.ok(alive(pid));
      assert.equal(hostname(), before, 'the machine keeps its hostname');
      await p.stop();
      assert.equal(alive(pid), false, 'stopped and reaped');
      assert.equal(p.restarts, 0, 'a requested stop is no crash');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
