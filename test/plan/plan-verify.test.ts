// `lode plan --verify`: a sample of a plan run through the bench with real drivers agrees with the plan (volumes of the sizes the plan chose, the pods it placed running, those it placed nowhere Pending), and the comparison reports each kind of disagreement.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmdirSync, existsSync } from 'node:fs';
import * as path from 'node:path';
import { loopsUnder, mountsUnder } from '../../src/bench/nodes/sweep.js';
import type { RunResult } from '../../src/bench/scenario/run-result.js';
import { parseNodeTemplate } from '../../src/plan/node-template.js';
import { benchPoolsAnnotation, chooseSample, compare } from '../../src/plan/plan-verify.js';
import { Planner } from '../../src/plan/planner.js';
import { readWorkloads } from '../../src/plan/workloads.js';
import { LODE_CLASSES, REPO_ROOT, podWithClaim, statefulSet, template, tempDir } from './plan-fixtures.js';

const MiB = 2 ** 20;
const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;

describe('the sample and the comparison', () => {
  const workload = [statefulSet('db', 5, '100Mi', 'lode-local-xfs'), podWithClaim('huge', '2Gi')].join('---\n');

  it('the sample is the first nodes of each group with the pods the plan put there, and pods that fit no fresh node', (t) => {
    const { write } = tempDir(t);
    const w = readWorkloads([LODE_CLASSES, write('w.yaml', workload)]);
    const g = { name: 'g', file: 'g.yaml', template: parseNodeTemplate(template('g', [{ spec: 'local=/var/lib/lode/local,size=1Gi' }]), 'g.yaml') };
    const outcome = new Planner(w, [g], 'spread').run();
    const sample = chooseSample(outcome, w, 1);
    assert.deepEqual(sample.nodes.map((n) => n.name), ['g-1']);
    assert.deepEqual(sample.pods, ['default/db-0', 'default/db-1', 'default/db-2', 'default/huge'], 'three 300Mi xfs volumes fill g-1; the 2Gi claim fits no node');
    assert.deepEqual(sample.claims, ['default/data-db-0', 'default/data-db-1', 'default/data-db-2']);
  });

  it('reports a pod the real drivers left Pending, a volume of another size, a pool that offers another size, and allocations that differ', (t) => {
    const { write } = tempDir(t);
    const w = readWorkloads([LODE_CLASSES, write('w.yaml', workload)]);
    const g = { name: 'g', file: 'g.yaml', template: parseNodeTemplate(template('g', [{ spec: 'local=/var/lib/lode/local,size=1Gi' }]), 'g.yaml') };
    const outcome = new Planner(w, [g], 'spread').run();
    const sample = chooseSample(outcome, w, 1);
    const pod = (name: string, node: string, phase: string, reason = ''): RunResult['pods'][number] => ({ name, node, phase, attempts: 1, createVolumeAttempts: {}, reason });
    const claim = (name: string, size: string): RunResult['claims'][number] => ({ name, phase: 'Bound', storageClass: 'lode-local-xfs', volume: `pv-${name}`, node: 'g-1', size });
    const agreeing = {
      pods: [pod('default/db-0', 'g-1', 'Running'), pod('default/db-1', 'g-1', 'Running'), pod('default/db-2', 'g-1', 'Running'), pod('default/huge', '', 'Pending', 'no room')],
      claims: [claim('default/data-db-0', '300Mi'), claim('default/data-db-1', '300Mi'), claim('default/data-db-2', '300Mi')],
      pools: [{ node: 'g-1', pool: 'local', capacityBytes: 1024 * MiB, allocatedBytes: 900 * MiB, freeBytes: 124 * MiB }],
    } as unknown as RunResult;
    assert.deepEqual(compare(sample, outcome, agreeing).differences, []);
    const differing = {
      pods: [pod('default/db-0', 'g-1', 'Running'), pod('default/db-1', 'g-1', 'Running'), pod('default/db-2', '', 'Pending', 'node(s) did not have enough free storage'), pod('default/huge', 'g-1', 'Running')],
      claims: [claim('default/data-db-0', '300Mi'), claim('default/data-db-1', '301Mi')],
      pools: [{ node: 'g-1', pool: 'local', capacityBytes: 1000 * MiB, allocatedBytes: 601 * MiB, freeBytes: 0 }],
    } as unknown as RunResult;
    assert.deepEqual(compare(sample, outcome, differing).differences, [
      'pod default/db-2: the plan placed it on g-1; with real drivers it is Pending (node(s) did not have enough free storage)',
      'pod default/huge: the plan found no node for it; with real drivers it runs on g-1',
      `claim default/data-db-1: the plan made a volume of ${300 * MiB} bytes; the real driver made ${301 * MiB} bytes`,
      `claim default/data-db-2: the plan made a volume of ${300 * MiB} bytes; the real driver made none`,
      `pool local on g-1: the plan counts ${1024 * MiB} bytes; the real driver offers ${1000 * MiB}`,
      `the sample's pools: the plan allocates ${900 * MiB} bytes in all; the real drivers ${601 * MiB}`,
    ]);
  });

  it('refuses pools the bench cannot give its drivers, saying why', () => {
    const pools = (spec: string, extra: { disk?: string; filesystem?: string } = {}) => parseNodeTemplate(template('g', [{ spec, ...extra }]), 'g.yaml').pools;
    assert.equal(benchPoolsAnnotation(pools('local=/var/lib/lode/local,reserve=10%', { disk: '10Gi' })), `local=${9 * 1024 * MiB}`, 'an unsized pool becomes the size its disk less its reserve comes to');
    assert.equal(benchPoolsAnnotation(pools('d=/var/lib/lode/d,backend=dir,size=1Gi', { filesystem: 'btrfs' })), `d=dir:${1024 * MiB}`);
    assert.throws(() => benchPoolsAnnotation(pools('v=/var/lib/lode/v,backend=lvm,vg=vg0', { disk: '10Gi' })), /--verify: pool "v" \(lvm\) cannot be run on the bench: the bench has no volume groups/);
    assert.throws(() => benchPoolsAnnotation(pools('d=/var/lib/lode/d,backend=dir,size=1Gi', { filesystem: 'xfs' })), /the bench's dir pools live on btrfs, not xfs/);
    assert.throws(() => benchPoolsAnnotation(pools('l=/var/lib/lode/l,size=1Gi,max-volume-size=100Mi')), /the bench gives its drivers no max-volume-size/);
  });
});

describe('lode plan --verify with real drivers', () => {
  it('a sample of two nodes agrees with the plan: xfs volumes of 300Mi, a generic ephemeral volume, a pod that fits nowhere left Pending; nothing is left behind', { skip: isRoot ? undefined : 'needs root: real drivers attach loop devices' }, (t) => {
    const { write } = tempDir(t);
    const g = write('g.yaml', template('g', [{ spec: 'local=/var/lib/lode/local,size=1Gi' }], { pods: '110' }));
    const ephemeral = `apiVersion: v1
kind: Pod
metadata: {name: tmp}
spec:
  containers: [{name: c, image: busybox}]
  volumes:
    - name: s
      ephemeral:
        volumeClaimTemplate:
          spec:
            accessModes: [ReadWriteOnce]
            storageClassName: lode-local
            resources: {requests: {storage: 20Mi}}
`;
    const w = write('w.yaml', [statefulSet('db', 5, '100Mi', 'lode-local-xfs'), ephemeral, podWithClaim('huge', '2Gi')].join('---\n'));
    const root = mkdtempSync('/tmp/lode-plan-verify-test-');
    const r = spawnSync(process.execPath, [path.join(REPO_ROOT, 'dist/src/cli/main.js'), 'plan', LODE_CLASSES, w, '--node-group', `g=${g}`, '--verify', '--work-dir', root, '-o', 'json'], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stdout + r.stderr);
    const report = JSON.parse(r.stdout) as { groups: { nodes: number }[]; verify: { nodes: string[]; pods: number; differences: string[] } };
    assert.equal(report.groups[0]!.nodes, 2, 'three 300Mi xfs volumes per 1Gi pool, the 20Mi one beside them');
    assert.deepEqual(report.verify.nodes, ['g-1', 'g-2']);
    assert.equal(report.verify.pods, 7, 'the six placed pods and the one that fits nowhere');
    assert.deepEqual(report.verify.differences, []);
    return (async () => {
      assert.deepEqual(await mountsUnder(root), [], 'no mount left under the work dir');
      assert.deepEqual(await loopsUnder(root), [], 'no loop device left');
      assert.equal(existsSync(root), true);
      rmdirSync(root); // the run's own directory is gone: rmdir fails loudly on a leftover
    })();
  });
});
