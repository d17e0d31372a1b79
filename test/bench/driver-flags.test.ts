// A scenario's drivers run as the DaemonSet's by default (the run's kubeconfig, the DaemonSet's settings), and every start of a driver, a restart and a lost node's cleanup included, takes the scenario's driverFlags; the DaemonSet Pod shows the driver's kill and restart.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Cluster } from '../../src/bench/cluster/cluster.js';
import { daemonSetDriverEnv } from '../../src/bench/sidecars/daemonset-args.js';
import { driverPod } from '../../src/bench/nodes/driver-pod.js';
import { markOf, needsRoot, runBuiltIn } from './run-helpers.js';

const FIXTURES = '../test/bench/fixtures';
const FLAGS = ['--node-loss', 'on', '--node-loss-period', '600', '--orphan-check', '600'];

interface Started {
  pid: number;
  args: string[];
  env: Map<string, string>;
}

/** What a running driver process was started with, read from /proc. */
function started(cluster: Cluster, node: string): Started {
  const pid = cluster.node(node).driver.pid;
  assert.ok(pid !== undefined, `${node}'s driver runs`);
  const nul = (f: string): string[] => readFileSync(`/proc/${pid}/${f}`, 'utf8').split('\0').filter((s) => s !== '');
  const env = new Map(nul('environ').map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)] as [string, string]));
  return { pid, args: nul('cmdline'), env };
}

describe('the DaemonSet\'s driver settings', () => {
  const daemonSet = (env: string): string => {
    const dir = mkdtempSync(join(tmpdir(), 'lode-ds-'));
    const file = join(dir, 'daemonset.yaml');
    writeFileSync(file, `apiVersion: apps/v1
kind: DaemonSet
metadata: {name: lode-node, namespace: storage}
spec:
  template:
    spec:
      containers:
        - name: lode
          env:
${env}`);
    return file;
  };

  it('are the lode container\'s literal env but what places it on a node, with POD_NAMESPACE as the DaemonSet\'s namespace', () => {
    const file = daemonSet(`            - {name: NODE_NAME, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}
            - {name: LODE_ENDPOINT, value: "unix:///csi/csi.sock"}
            - {name: LODE_NODE_ID, value: "$(NODE_NAME)"}
            - {name: LODE_METRICS_ADDRESS, value: "127.0.0.1:9809"}
            - {name: LODE_IN_CLUSTER, value: "true"}
            - {name: LODE_NODE_LOSS, value: "off"}
            - {name: LODE_ORPHAN_GRACE, value: "7200"}
            - {name: POD_NAMESPACE, valueFrom: {fieldRef: {fieldPath: metadata.namespace}}}
`);
    assert.deepEqual(daemonSetDriverEnv('lode', file), { LODE_NODE_LOSS: 'off', LODE_ORPHAN_GRACE: '7200', POD_NAMESPACE: 'storage' });
    rmSync(dirname(file), { recursive: true });
  });

  it('refuse what the bench would pass on wrong: a reference to another variable, a value that is not a string', () => {
    const ref = daemonSet('            - {name: LODE_NAMESPACE, value: "$(POD_NAMESPACE)"}\n');
    assert.throws(() => daemonSetDriverEnv('lode', ref), /LODE_NAMESPACE: "\$\(POD_NAMESPACE\)" refers to another variable/);
    const unquoted = daemonSet('            - {name: LODE_DELETE_ORPHANS, value: true}\n');
    assert.throws(() => daemonSetDriverEnv('lode', unquoted), /LODE_DELETE_ORPHANS: the value must be a string/);
    assert.throws(() => daemonSetDriverEnv('driver', unquoted), /no container "driver"/);
    for (const f of [ref, unquoted]) rmSync(dirname(f), { recursive: true });
  });
});

describe('driver starts and the scenario\'s driverFlags', { skip: needsRoot }, () => {
  it('a driver restarted and a lost node\'s driver started for cleanup take the same flags, kubeconfig and DaemonSet settings, and the run tears down cleanly', async () => {
    const seen = new Map<string, Started>();
    // The driver container of node-1's DaemonSet Pod (driverPods), as kubectl would read it at each of those steps.
    const pod = driverPod('node-1', 'uid').metadata!;
    const container = new Map<string, [boolean | undefined, number | undefined, string | undefined]>();
    const read = (cluster: Cluster, when: string): void => {
      const p = cluster.store.get('Pod', pod.name!, pod.namespace);
      const c = p?.status?.containerStatuses?.find((x) => x.name === 'lode');
      container.set(when, [c?.ready, c?.restartCount, p?.status?.conditions?.find((x) => x.type === 'Ready')?.status]);
    };
    // Before each step runs: the starts are read at the kill (the first start) and at the mark after the restart.
    const r = await runBuiltIn(`${FIXTURES}/driver-flags/scenario.yaml`, undefined, {}, undefined, (_i, step, cluster) => {
      if (step.op === 'killDriver') { seen.set('first', started(cluster, 'node-1')); read(cluster, 'before the kill'); }
      if (step.op === 'restartDriver') read(cluster, 'killed');
      if (step.op === 'mark' && step.text === 'restarted') { seen.set('restarted', started(cluster, 'node-1')); read(cluster, 'restarted'); }
    });
    // The DaemonSet Pod shows what its driver does: not ready while it is down, one restart after.
    assert.deepEqual(container.get('before the kill'), [true, 0, 'True']);
    assert.deepEqual(container.get('killed'), [false, 0, 'False']);
    assert.deepEqual(container.get('restarted'), [true, 1, 'True']);
    const first = seen.get('first');
    const again = seen.get('restarted');
    assert.ok(first !== undefined && again !== undefined);
    assert.notEqual(again.pid, first.pid, 'a new process');
    // The same command line, but for the metrics port: the bench takes a free one at each start.
    const portless = (args: string[]): string[] => args.map((a, i) => args[i - 1] === '--metrics-address' ? '127.0.0.1:<port>' : a);
    assert.deepEqual(portless(again.args), portless(first.args), 'the same command line');
    const kubeconfig = first.args.indexOf('--kubeconfig');
    assert.ok(kubeconfig > 0, 'with the run\'s kubeconfig: no driverApi line means API access');
    assert.deepEqual(first.args.slice(-FLAGS.length), FLAGS, 'the scenario\'s flags last, so they win over the bench\'s own');
    const ds = daemonSetDriverEnv();
    assert.equal(ds.LODE_NODE_LOSS, 'off', 'the base DaemonSet keeps node-loss handling off');
    for (const s of [first, again]) for (const [k, v] of Object.entries(ds)) assert.equal(s.env.get(k), v, `${k} as the DaemonSet sets it`);
    // The restarted driver serves its node again.
    assert.equal(markOf(r, 'restarted').pods.find((p) => p.name === 'default/app-1')?.phase, 'Running');
    assert.ok(r.volumes.some((v) => v.node === 'node-2'), 'node-2 kept a volume for the teardown to clean');
    // runBuiltIn has checked the teardown: node-2's driver, started again with --node-loss on and
    // --orphan-check (which need API access), deleted its volume; no problem, mount or loop device left.
  });
});
