// `lode bench --sidecars real`: the demo with the real kubernetes-csi sidecars (../shared/tools/csi) per node and a real snapshot-controller ends with every pod Running, and --json names every component with its version.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { needsRoot } from './run-helpers.js';
import { csiTool, skipWithoutSidecarTools } from '../helpers/csi-tools.js';
import { loopsUnder, mountsUnder } from '../../src/bench/nodes/sweep.js';
import type { RunFailure, RunResult } from '../../src/bench/scenario/run-result.js';

const MAIN = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const NODES = ['worker-a', 'worker-b', 'worker-c'];
const PER_NODE = ['csi-provisioner', 'csi-resizer', 'csi-snapshotter', 'csi-node-driver-registrar'];

function bench(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [MAIN, 'bench', ...args], { cwd: REPO, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => { stdout += d.toString(); });
    p.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
    p.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Processes whose command line names `dir`: a sidecar or driver of the run still alive. */
function processesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
      if (cmd.includes(dir)) out.push(`${pid} ${cmd.slice(0, 120)}`);
    } catch { /* gone meanwhile */ }
  }
  return out;
}


describe('lode bench --sidecars real', { skip: needsRoot }, () => {
  it('runs the demo with the real sidecars: every pod Running, the real provisioners made the volumes and capacity, --json names each component and its version', async (t) => {
    if (await skipWithoutSidecarTools(t)) return;
    const root = mkdtempSync('/tmp/lode-real-sidecars-');
    const json = path.join(root, 'out.json');
    const work = path.join(root, 'work');
    try {
      const r = await bench(['scenarios/demo/scenario.yaml', '--sidecars', 'real', '--json', json, '--events', 'none', '--work-dir', work]);
      assert.equal(r.code, 0, `lode bench exited ${r.code}:\n${r.stderr.slice(-3000)}`);
      const parsed = JSON.parse(readFileSync(json, 'utf8')) as RunResult | RunFailure;
      assert.ok(!('failed' in parsed), `the run failed: ${JSON.stringify(parsed)}`);
      const out = parsed as RunResult;
      assert.equal(out.sidecars, 'real');
      // Every pod, the DaemonSet's sidecar pods included, Running at the end.
      assert.deepEqual(out.pods.filter((p) => p.phase !== 'Running' || p.terminating).map((p) => `${p.name} ${p.phase}`), []);
      assert.deepEqual(out.pods.map((p) => p.name).sort(), ['default/db-0', 'default/db-1', 'default/db-2', 'default/report', ...NODES.map((n) => `lode-system/lode-node-${n}`)].sort());
      assert.ok(out.claims.every((c) => c.phase === 'Bound'), 'every claim bound');
      // The volumes were made by the real provisioners, through the API: no re-enacted provisioner acted.
      const realSucceeded = out.events.filter((e) => e.source === 'api/csi-provisioner' && e.message.includes('ProvisioningSucceeded'));
      assert.ok(realSucceeded.length >= 4, `the real csi-provisioner reported its provisioning (${realSucceeded.length})`);
      assert.deepEqual(out.events.filter((e) => e.reason === 'ProvisioningSucceeded').map((e) => e.source), [], 'no re-enacted provisioner acted');
      // Capacity: one object per node and class, by the real provisioner of that node.
      const classes = [...new Set(out.capacities.map((c) => c.storageClass))].sort();
      assert.ok(classes.length >= 1);
      assert.deepEqual(out.capacities.map((c) => `${c.node} ${c.storageClass}`).sort(), NODES.flatMap((n) => classes.map((k) => `${n} ${k}`)).sort());
      // Every component named, real ones with their binary's own version.
      for (const name of PER_NODE) {
        const { stdout } = await new Promise<{ stdout: string }>((resolve) => {
          void csiTool(name).then((b) => {
            const p = spawn(b as string, ['--version']);
            let s = '';
            p.stdout.on('data', (d: Buffer) => { s += d.toString(); });
            p.on('close', () => resolve({ stdout: s }));
          });
        });
        const want = /v\d+\.\d+\.\d+/.exec(stdout)?.[0];
        assert.ok(want, `${name} --version prints a version`);
        for (const node of NODES) {
          const c = out.components.find((x) => x.name === name && x.scope === node);
          assert.ok(c, `a component ${name} on ${node}`);
          assert.equal(c.implementation, 'real');
          assert.equal(c.version, want, `${name} on ${node}: the binary's version`);
        }
      }
      const ctl = out.components.find((x) => x.name === 'snapshot-controller');
      assert.equal(ctl?.implementation, 'real');
      assert.match(ctl?.version ?? '', /^v\d+\.\d+\.\d+/);
      assert.ok(out.components.some((c) => c.name === 'kube-scheduler' && c.implementation === 'reenacted'), 'the re-enacted ones are named too');
      assert.match(r.stdout, /csi-provisioner \(worker-a, worker-b, worker-c\): real, v\d/);
      // Nothing left: no sidecar or driver process, no mount, no loop device, no work dir.
      assert.deepEqual(processesUnder(work), []);
      assert.deepEqual(await mountsUnder(root), []);
      assert.deepEqual(await loopsUnder(root), []);
      assert.equal(existsSync(work), false, 'the work dir is removed');
      assert.deepEqual(out.teardownProblems, []);
      t.diagnostic(`components: ${out.components.filter((c) => c.implementation === 'real').map((c) => `${c.name}@${c.scope} ${c.version}`).join(', ')}; wall ${(out.metrics.wallMs / 1000).toFixed(0)}s`);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('refuses clearly when the binaries are missing, before any driver starts', async () => {
    const root = mkdtempSync('/tmp/lode-real-sidecars-missing-');
    try {
      const r = await bench(['scenarios/demo/scenario.yaml', '--sidecars', 'real', '--events', 'none', '--work-dir', path.join(root, 'work')], { ...process.env, LODE_CSI_TOOLS: path.join(root, 'no-tools') });
      assert.equal(r.code, 1);
      assert.match(r.stderr, /sidecars: real needs the upstream kubernetes-csi binaries, and \S*no-tools has neither an unpack\.sh nor the binaries \(set LODE_CSI_TOOLS/);
      assert.deepEqual(processesUnder(root), []);
      assert.equal(existsSync(path.join(root, 'work')), false);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('refuses an unknown --sidecars value and sidecars: real with central provisioning', async () => {
    const bad = await bench(['demo', '--sidecars', 'fake']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--sidecars must be real or reenacted/);
    const central = await bench(['demo', '--sidecars', 'real', '--provisioning', 'central', '--events', 'none', '--work-dir', '/tmp/lode-real-sidecars-central']);
    assert.equal(central.code, 1);
    assert.match(central.stderr, /sidecars: real runs csi-provisioner on every node \(--node-deployment\).*needs provisioning: distributed/);
  });
});
