// Manifests as users bring them: a whole chart's output in one run, claim retention, and invalid objects refused before anything starts.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { markOf, needsRoot, podPhase, runBuiltIn } from './run-helpers.js';

const FIXTURES = '../test/bench/fixtures';
const MAIN = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
const FIXTURE_DIR = fileURLToPath(new URL('../../../test/bench/fixtures/', import.meta.url));

describe('a helm template output', { skip: needsRoot }, () => {
  it('loads in one go; its StatefulSet runs; the kinds only stored are reported', async () => {
    const r = await runBuiltIn(`${FIXTURES}/helm-chart/scenario.yaml`);
    for (const p of ['release-kv-0', 'release-kv-1']) assert.equal(podPhase(r, p), 'Running', `${p} running`);
    assert.deepEqual(r.claims.map((c) => `${c.name}:${c.phase}:${c.storageClass}`), ['default/data-release-kv-0:Bound:lode-local', 'default/data-release-kv-1:Bound:lode-local'], 'the default class was given to claims naming none');
    assert.deepEqual(r.storedKinds, { NetworkPolicy: 1, PodDisruptionBudget: 1, ServiceAccount: 1, Secret: 1, ConfigMap: 1, Service: 2 });
  });
});

describe('StatefulSet claim retention', { skip: needsRoot }, () => {
  it('whenScaled Delete removes a condemned pod\'s claims with it; whenDeleted Delete removes the claims with the set', async () => {
    const r = await runBuiltIn(`${FIXTURES}/retention/scenario.yaml`);
    const running = markOf(r, 'running');
    assert.deepEqual(running.claimOwners['default/data-cache-0'], ['StatefulSet/cache']);
    assert.deepEqual(running.claimOwners['default/data-web-1'], [], 'a claim of a pod not condemned has no owner under whenDeleted Retain');
    const down = markOf(r, 'scaled-down');
    assert.deepEqual(down.claims.map((c) => c.name).filter((n) => n.includes('web')), ['default/data-web-0'], 'claims of web-1 and web-2 went with their pods');
    const gone = markOf(r, 'cache-deleted');
    assert.deepEqual(gone.claims.map((c) => c.name), ['default/data-web-0'], 'the cache claim went with its set');
    assert.equal(r.metrics.volumesDeleted, 3, 'reclaim policy Delete: their volumes were deleted on the node');
  });
});

describe('invalid objects', { skip: needsRoot }, () => {
  it('are refused before any driver starts, with file, object and field, also in --json', () => {
    const root = mkdtempSync('/tmp/lode-bench-refused-');
    try {
      const json = join(root, 'result.json');
      const work = join(root, 'work');
      const res = spawnSync(process.execPath, [MAIN, 'bench', join(FIXTURE_DIR, 'helm-chart/invalid-scenario.yaml'), '--work-dir', work, '--json', json], { encoding: 'utf8' });
      assert.equal(res.status, 1, res.stderr);
      const out = JSON.parse(readFileSync(json, 'utf8')) as { failed: string; errors: string[] };
      assert.equal(out.failed, 'manifests');
      const file = join(FIXTURE_DIR, 'helm-chart/invalid.yaml');
      assert.deepEqual(out.errors, [
        `${file}: PersistentVolumeClaim "empty" is invalid: spec.resources[storage]: Invalid value: "0": must be greater than zero`,
        `${file}: Pod "scratch" is invalid: spec.volumes[0].ephemeral.volumeClaimTemplate.spec.accessModes: Unsupported value: "RWO": supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"`,
      ]);
      assert.match(res.stderr, /PersistentVolumeClaim "empty" is invalid/);
      assert.equal(existsSync(work), false, 'no run directory: no driver was started');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('a PV\'s mountOptions, a pod\'s schedulerName', { skip: needsRoot }, () => {
  it('reach the mount kubelet asks for; a pod for another scheduler is left alone', async () => {
    const r = await runBuiltIn(`${FIXTURES}/mount-options/scenario.yaml`);
    const other = r.pods.find((p) => p.name === 'default/elsewhere');
    assert.deepEqual([other?.phase, other?.node, other?.attempts], ['Pending', '', 0]);
    assert.notEqual(podPhase(r, 'app'), 'Running');
    const failed = r.events.filter((e) => e.reason === 'FailedMount' && e.name === 'app').map((e) => e.message);
    assert.ok(failed.some((m) => m.includes('mount_flags (nosuchoption) were refused by the filesystem')), failed.join('\n'));
  });
});
