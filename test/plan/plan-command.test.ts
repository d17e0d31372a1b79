// `lode plan` as a user runs it: the table and the JSON answer, and bad input (a missing template, one without pools, an unknown storage class, bad flags) refused with a clear message and exit status 1, as kubectl refuses.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { LODE_CLASSES, REPO_ROOT, podWithClaim, statefulSet, template, tempDir } from './plan-fixtures.js';

const MAIN = path.join(REPO_ROOT, 'dist/src/cli/main.js');

function lode(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [MAIN, 'plan', ...args], { encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

interface JsonReport {
  scoring: string;
  pods: { total: number; placed: number; unplaced: number };
  groups: { name: string; nodes: number; max: number | null; pods: number; pools: { name: string; perNodeBytes: number; capacityBytes: number; allocatedBytes: number; freeBytes: number; volumes: number }[] }[];
  nodes: { name: string; group: string; pods: number }[];
  unplaced: { pod: string; claims: { name: string; storageClass: string; requestBytes: number }[]; reasons: { group: string; reason: string }[] }[];
  ignored: Record<string, number>;
}

const GiB = 2 ** 30;

describe('lode plan', () => {
  it('answers in JSON: nodes per group, capacity left per pool, and each pod that fits nowhere with its claims and reasons', (t) => {
    const { write } = tempDir(t);
    const small = write('small.yaml', template('small', [{ spec: 'local=/var/lib/lode/local,size=10Gi' }]));
    const big = write('big.yaml', template('big', [{ spec: 'local=/var/lib/lode/local,reserve=10%', disk: '100Gi' }]));
    const work = write('work.yaml', [statefulSet('db', 6, '4Gi'), podWithClaim('archive', '200Gi'), 'apiVersion: v1\nkind: Service\nmetadata: {name: db}\nspec: {ports: [{port: 5432}]}\n'].join('---\n'));
    const r = lode([LODE_CLASSES, work, '--node-group', `small=${small},max=2`, '--node-group', `big=${big}`, '-o', 'json']);
    assert.equal(r.status, 0, r.stderr);
    const report = JSON.parse(r.stdout) as JsonReport;
    assert.equal(report.scoring, 'spread');
    assert.deepEqual(report.pods, { total: 7, placed: 6, unplaced: 1 });
    assert.deepEqual(report.groups.map((g) => [g.name, g.nodes, g.max, g.pods]), [['small', 2, 2, 4], ['big', 1, null, 2]]);
    assert.deepEqual(report.groups[0]!.pools, [{ name: 'local', backend: 'loop', perNodeBytes: 10 * GiB, capacityBytes: 20 * GiB, allocatedBytes: 16 * GiB, freeBytes: 4 * GiB, volumes: 4 }]);
    assert.equal(report.groups[1]!.pools[0]!.perNodeBytes, 90 * GiB, 'the reserve is left out of what a node offers');
    assert.equal(report.groups[1]!.pools[0]!.freeBytes, 82 * GiB);
    assert.deepEqual(report.nodes.map((n) => n.name), ['small-1', 'small-2', 'big-1']);
    assert.deepEqual(report.unplaced, [{
      pod: 'default/archive',
      claims: [{ name: 'archive-data', storageClass: 'lode-local', requestBytes: 200 * GiB }],
      reasons: [
        { group: 'small', reason: 'node(s) did not have enough free storage (claim archive-data asks 200Gi; pool local of a new node gives at most 10Gi)' },
        { group: 'big', reason: 'node(s) did not have enough free storage (claim archive-data asks 200Gi; pool local of a new node gives at most 90Gi)' },
      ],
    }]);
    assert.deepEqual(report.ignored, { Service: 1 });
  });

  it('answers in tables by default, and --scoring pack changes the node count where the shape decides it', (t) => {
    const { write } = tempDir(t);
    const g = write('g.yaml', template('g', [{ spec: 'local=/var/lib/lode/local,size=10Gi' }]));
    const work = write('work.yaml', ['p1', 'p2', 'p3', 'p4'].map((p, i) => podWithClaim(p, `${[6, 5, 4, 5][i]}Gi`)).join('---\n'));
    const spread = lode([LODE_CLASSES, work, '--node-group', `g=${g}`]);
    assert.equal(spread.status, 0, spread.stderr);
    assert.match(spread.stdout, /^Plan: 4 of 4 pods placed on 3 node\(s\); storage scoring: spread$/m);
    assert.match(spread.stdout, /│ g +│ 3 +│ - +│ 4 +│ local │ 10Gi +│ 4 +│ 20Gi │ 10Gi │/);
    const pack = lode([LODE_CLASSES, work, '--node-group', `g=${g}`, '--scoring', 'pack']);
    assert.equal(pack.status, 0, pack.stderr);
    assert.match(pack.stdout, /^Plan: 4 of 4 pods placed on 2 node\(s\); storage scoring: pack$/m);
    assert.doesNotMatch(pack.stdout, /fit nowhere/);
  });

  it('lists the pods that fit nowhere in the table, one row per group', (t) => {
    const { write } = tempDir(t);
    const g = write('g.yaml', template('g', [{ spec: 'local=/var/lib/lode/local,size=10Gi' }]));
    const work = write('work.yaml', podWithClaim('huge', '50Gi'));
    const r = lode([LODE_CLASSES, work, '--node-group', `g=${g}`]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^Pods that fit nowhere \(1\)$/m);
    assert.match(r.stdout, /│ default\/huge │ huge-data 50Gi lode-local │ g +│ node\(s\) did not have enough free storage \(claim huge-data asks 50Gi; pool local of a new node gives at most 10Gi\) │/);
  });

  it('prints the table docs/plan.md shows for its example command, from the fixtures in the repository', () => {
    const r = spawnSync(process.execPath, [MAIN, 'plan', 'deploy/base/storageclasses.yaml', 'test/plan/fixtures/workloads',
      '--node-group', 'small=test/plan/fixtures/groups/small-node.yaml,max=2', '--node-group', 'big=test/plan/fixtures/groups/big-node.yaml'], { cwd: REPO_ROOT, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const doc = readFileSync(path.join(REPO_ROOT, 'docs/plan.md'), 'utf8');
    assert.ok(doc.includes(r.stdout.trimEnd()), `docs/plan.md shows this output of its example:\n${r.stdout}`);
  });

  describe('bad input: exit status 1 and a message that says what to fix', () => {
    const cases: { name: string; args: (d: ReturnType<typeof tempDir>) => string[]; message: RegExp }[] = [
      {
        name: 'a group\'s template that does not exist',
        args: (d) => [LODE_CLASSES, d.write('w.yaml', statefulSet('s', 1, '1Gi')), '--node-group', `g=${path.join(d.dir, 'missing.yaml')}`],
        message: /^error: .*missing\.yaml: cannot read the node group's template: ENOENT/,
      },
      {
        name: 'a template without a NodePools document',
        args: (d) => [LODE_CLASSES, d.write('w.yaml', statefulSet('s', 1, '1Gi')), '--node-group', `g=${d.write('t.yaml', 'apiVersion: v1\nkind: Node\nmetadata: {name: t}\n')}`],
        message: /^error: .*t\.yaml: the template has no pools: add NodePools document \(apiVersion plan\.lode\.csi\.dev\/v1alpha1\)/,
      },
      {
        name: 'a template listing no pools',
        args: (d) => [LODE_CLASSES, d.write('w.yaml', statefulSet('s', 1, '1Gi')), '--node-group', `g=${d.write('t.yaml', 'apiVersion: v1\nkind: Node\nmetadata: {name: t}\n---\napiVersion: plan.lode.csi.dev/v1alpha1\nkind: NodePools\npools: []\n')}`],
        message: /NodePools: pools: the template lists no pools/,
      },
      {
        name: 'an unsized pool without the size of its disk',
        args: (d) => [LODE_CLASSES, d.write('w.yaml', statefulSet('s', 1, '1Gi')), '--node-group', `g=${d.write('t.yaml', template('t', [{ spec: 'local=/var/lib/lode/local,reserve=5%' }]))}`],
        message: /pools\[0\]: pool "local": give disk: \(the size of its filesystem\), or size= in its spec/,
      },
      {
        name: 'a pool spec the driver refuses',
        args: (d) => [LODE_CLASSES, d.write('w.yaml', statefulSet('s', 1, '1Gi')), '--node-group', `g=${d.write('t.yaml', template('t', [{ spec: 'local=/var/lib/lode/local,size=1Gi,colour=red' }]))}`],
        message: /pools\[0\]: pool "local": unknown option "colour"/,
      },
      {
        name: 'a claim of a storage class the manifests do not hold',
        args: (d) => [LODE_CLASSES, d.write('w.yaml', statefulSet('s', 3, '1Gi', 'lode-fast')), '--node-group', `g=${d.write('t.yaml', template('t', [{ spec: 'local=/var/lib/lode/local,size=1Gi' }]))}`],
        message: /^error: storageclass\.storage\.k8s\.io "lode-fast" not found in the manifests, claimed by 3 claim\(s\): default\/data-s-0, default\/data-s-1, default\/data-s-2 \(classes given: lode-local, lode-local-xfs\)/,
      },
      {
        name: 'a manifest the API server would refuse',
        args: (d) => [LODE_CLASSES, d.write('w.yaml', 'apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c}\nspec: {accessModes: [ReadWriteOnce], storageClassName: lode-local, resources: {requests: {storage: lots}}}\n'), '--node-group', `g=${d.write('t.yaml', template('t', [{ spec: 'local=/var/lib/lode/local,size=1Gi' }]))}`],
        message: /w\.yaml: PersistentVolumeClaim "c" is invalid/,
      },
      {
        name: 'an unknown --scoring',
        args: (d) => [LODE_CLASSES, '--node-group', `g=${d.write('t.yaml', template('t', [{ spec: 'local=/var/lib/lode/local,size=1Gi' }]))}`, '--scoring', 'tight'],
        message: /^error: --scoring must be one of spread, pack, none, not "tight"/,
      },
      {
        name: 'a --node-group without a template',
        args: () => [LODE_CLASSES, '--node-group', 'g'],
        message: /^error: --node-group "g": expected NAME=TEMPLATE\.yaml\[,max=N\]/,
      },
      {
        name: 'no --node-group at all',
        args: () => [LODE_CLASSES],
        message: /^error: give at least one --node-group NAME=TEMPLATE\.yaml/,
      },
      {
        name: 'an unknown flag',
        args: () => [LODE_CLASSES, '--colour'],
        message: /^error: Unknown option '--colour'/,
      },
    ];
    for (const c of cases) {
      it(c.name, (t) => {
        const r = lode(c.args(tempDir(t)));
        assert.equal(r.status, 1, r.stdout + r.stderr);
        assert.equal(r.stdout, '', 'no half answer on stdout');
        assert.match(r.stderr, c.message);
      });
    }
  });
});
