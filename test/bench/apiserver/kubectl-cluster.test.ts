// Real kubectl against a held bench run, as a new user tries it on a cluster: nodes Ready, wait, rollout status, get -w, and field validation.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmdirSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { needsRoot } from '../run-helpers.js';
import { holdRun } from '../../helpers/held-run.js';
import { KUBECTL_BINARIES, kubectlSkip } from './kubectl-runner.js';
import { RESOURCES } from '../../../src/bench/api/resources.js';
import { dropUnknownFields, schemaOf } from '../../../src/bench/apiserver/known-fields.js';

const SCENARIO = fileURLToPath(new URL('../../../../test/bench/fixtures/api/scenario.yaml', import.meta.url));
const SHUTDOWN_SCENARIO = fileURLToPath(new URL('../../../../test/bench/fixtures/api/scenario-node-shutdown.yaml', import.meta.url));
/** The machine's kubectl only: the flags used here (--validate=warn, wait --for=jsonpath) are newer than Debian's 1.20. */
const KUBECTL = KUBECTL_BINARIES[0];

interface Ran { code: number | null; stdout: string; stderr: string }

const STS = `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: web}
spec:
  replicas: 2
  serviceName: web
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: c, image: busybox}]
`;

const CONFIGMAP = (name: string): string => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}, foo: bar}\ndata: {a: "1"}\n`;

describe('kubectl against a held bench run, as on a cluster', { skip: needsRoot ?? kubectlSkip() }, () => {
  let root = '';
  let home = '';
  let child: ChildProcess;
  let exited: Promise<number | null>;
  let env: NodeJS.ProcessEnv = {};
  let base = '';

  /**
   * Runs kubectl; the bound (60 s unless given) turns a hang into a failure: the result is what
   * is asserted, never the time. `onStderr` sees stderr as it comes (to act once kubectl got somewhere).
   */
  const kubectl = (args: string[], input?: string, boundMs = 60_000, onStderr?: (soFar: string) => void): Promise<Ran> => new Promise((resolve) => {
    const p = spawn(KUBECTL!, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => { stdout += d.toString(); });
    p.stderr.on('data', (d: Buffer) => { stderr += d.toString(); onStderr?.(stderr); });
    const bound = setTimeout(() => p.kill('SIGKILL'), boundMs);
    p.on('close', (code) => { clearTimeout(bound); resolve({ code, stdout, stderr }); });
    p.stdin.end(input ?? '');
  });
  const ok = async (args: string[], input?: string): Promise<string> => {
    const r = await kubectl(args, input);
    assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };

  before(async () => {
    root = mkdtempSync('/tmp/lode-kubectl-cluster-');
    home = mkdtempSync('/tmp/lode-kubectl-cluster-home-');
    const run = await holdRun(SCENARIO, root);
    child = run.child;
    exited = run.exited;
    base = run.url;
    env = { ...process.env, HOME: home, KUBECONFIG: run.kubeconfig };
  });

  after(async () => {
    if (child.exitCode === null) child.kill('SIGINT');
    assert.equal(await exited, 0);
    rmSync(home, { recursive: true, force: true });
    if (existsSync(root) && readdirSync(root).length === 0) rmdirSync(root);
  });

  it('get nodes: the node the scenario added is Ready, with the conditions its kubelet posts', async () => {
    const rows = (await ok(['get', 'nodes', '--no-headers'])).trim().split('\n').map((l) => l.split(/\s+/));
    assert.deepEqual(rows.map((r) => [r[0], r[1]]), [['api-node', 'Ready']]);
    const conditions = await ok(['get', 'node', 'api-node', '-o', 'jsonpath={range .status.conditions[*]}{.type}={.status} {end}']);
    assert.deepEqual(conditions.trim().split(' '), ['MemoryPressure=False', 'DiskPressure=False', 'PIDPressure=False', 'Ready=True']);
  });

  it('wait --for=condition and --for=jsonpath return at once when they already hold; --for=delete when the object goes', async () => {
    // kubectl wait blocks in its watch call until the response headers come, whatever its --timeout: before the
    // server flushed them it sat there until the first bookmark (30 s) and then succeeded. The 15 s bound on the
    // process makes that a failure.
    const WAIT_BOUND = 15_000;
    const ready = await kubectl(['wait', '--for=condition=Ready', 'pod/first', '--timeout=10s'], undefined, WAIT_BOUND);
    assert.equal(ready.code, 0, ready.stderr);
    assert.equal(ready.stdout.trim(), 'pod/first condition met');
    const running = await kubectl(['wait', '--for=jsonpath={.status.phase}=Running', 'pod/first', '--timeout=10s'], undefined, WAIT_BOUND);
    assert.equal(running.code, 0, running.stderr);
    assert.equal(running.stdout.trim(), 'pod/first condition met');
    // (apply, not create configmap: that one sends protobuf, which the bench does not take)
    await ok(['apply', '-f', '-'], 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: doomed}\n');
    // Deleted only once kubectl's watch is open (-v=6 logs each request when its response starts):
    // deleted earlier, wait would find nothing to wait for.
    let watching: () => void = () => {};
    const opened = new Promise<void>((resolve) => { watching = resolve; });
    // Its --timeout spans the delete command too. With 10 s it timed out once in CI, with no event,
    // on a machine so loaded (the VM part runs beside these files) that the three commands before
    // it had taken 7 s. The headers' flush is held to WAIT_BOUND by the two waits above and
    // checked by the next test.
    const waiting = kubectl(['wait', '--for=delete', 'configmap/doomed', '--timeout=60s', '-v=6'], undefined, 90_000, (err) => { if (/GET \S+watch=true\S* 200 OK/.test(err)) watching(); });
    await Promise.race([opened, waiting]);
    const since = Date.now();
    await ok(['delete', 'configmap', 'doomed']);
    const deletedAfter = Date.now() - since;
    const gone = await waiting;
    assert.equal(gone.code, 0, `the delete returned ${deletedAfter} ms after the watch opened\n${gone.stderr}`);
    assert.equal(gone.stdout.trim(), 'configmap/doomed condition met');
    const notYet = await kubectl(['wait', '--for=condition=Nope', 'pod/first', '--timeout=1s'], undefined, WAIT_BOUND);
    assert.notEqual(notYet.code, 0, 'a condition that does not hold is not met');
  });

  it('a watch answers with its headers before any event', async () => {
    const list = await (await fetch(`${base}/api/v1/namespaces/default/configmaps`)).json() as { metadata: { resourceVersion: string } };
    const ac = new AbortController();
    const bound = setTimeout(() => ac.abort(), 10_000);
    try {
      // From the current resourceVersion nothing is replayed: only the headers can arrive.
      const res = await fetch(`${base}/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=${list.metadata.resourceVersion}`, { signal: ac.signal });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-type'), 'application/json');
    } finally {
      clearTimeout(bound);
      ac.abort();
    }
  });

  it('rollout status completes for a StatefulSet, and again after a template change rolls its pods', async () => {
    assert.equal(await ok(['apply', '--dry-run=server', '-o', 'jsonpath={.metadata.generation}', '-f', '-'], STS), '1', 'a server-side dry run answers what the store would hold');
    await ok(['apply', '-f', '-'], STS);
    const first = await ok(['rollout', 'status', 'statefulset/web', '--timeout=60s']);
    assert.match(first, /partitioned roll out complete: 2 new pods have been updated\.\.\.\n$/);
    const revision = (await ok(['get', 'sts', 'web', '-o', 'jsonpath={.metadata.generation} {.status.observedGeneration} {.status.updateRevision}'])).split(' ');
    assert.deepEqual(revision.slice(0, 2), ['1', '1']);
    await ok(['set', 'image', 'statefulset/web', 'c=busybox:2']);
    const second = await ok(['rollout', 'status', 'statefulset/web', '--timeout=60s']);
    assert.match(second, /partitioned roll out complete: 2 new pods have been updated\.\.\.\n$/);
    const after = (await ok(['get', 'sts', 'web', '-o', 'jsonpath={.metadata.generation} {.status.observedGeneration} {.status.updateRevision} {.status.currentRevision}'])).split(' ');
    assert.deepEqual(after.slice(0, 2), ['2', '2'], 'the image change is a spec change; status writes did not move it further');
    assert.notEqual(after[2], revision[2], 'a new template is a new revision');
    assert.equal(after[3], after[2], 'every pod runs it, so it is the current revision');
    const pods = await ok(['get', 'pods', '-l', 'app=web', '-o', 'jsonpath={range .items[*]}{.metadata.name}:{.spec.containers[0].image}:{.metadata.labels.controller-revision-hash} {end}']);
    assert.deepEqual(pods.trim().split(' ').sort(), [`web-0:busybox:2:${after[2]}`, `web-1:busybox:2:${after[2]}`]);
    // rollout restart stamps the template with an annotation: a new revision, rolled the same way.
    await ok(['rollout', 'restart', 'statefulset/web']);
    assert.match(await ok(['rollout', 'status', 'statefulset/web', '--timeout=60s']), /partitioned roll out complete: 2 new pods have been updated\.\.\.\n$/);
    const restarted = (await ok(['get', 'sts', 'web', '-o', 'jsonpath={.metadata.generation} {.status.observedGeneration} {.status.updateRevision}'])).split(' ');
    assert.deepEqual(restarted.slice(0, 2), ['3', '3']);
    assert.notEqual(restarted[2], after[2]);
    // Scaled down, the status follows at once too.
    await ok(['scale', 'statefulset/web', '--replicas=1']);
    assert.match(await ok(['rollout', 'status', 'statefulset/web', '--timeout=60s']), /partitioned roll out complete: 1 new pods have been updated\.\.\.\n$/);
    assert.equal(await ok(['get', 'sts', 'web', '-o', 'jsonpath={.metadata.generation} {.status.observedGeneration}']), '4 4');
    // web-1 goes through its kubelet; once it is gone the status counts one replica.
    assert.equal((await ok(['wait', '--for=jsonpath={.status.replicas}=1', 'statefulset/web', '--timeout=30s'])).trim(), 'statefulset.apps/web condition met');
    await ok(['label', 'statefulset', 'web', 'tier=db']);
    assert.equal(await ok(['get', 'sts', 'web', '-o', 'jsonpath={.metadata.generation}']), '4', 'a label is not a spec change');
  });

  it('unknown fields: kubectl\'s default (Strict) refuses with upstream\'s message; --validate=warn stores without them and prints the warning', async () => {
    const strict = await kubectl(['apply', '-f', '-'], CONFIGMAP('strict'));
    assert.equal(strict.code, 1);
    assert.match(strict.stderr, /ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "metadata\.foo"/);
    assert.equal((await kubectl(['get', 'configmap', 'strict'])).code, 1, 'nothing was created');

    const warned = await kubectl(['apply', '--validate=warn', '-f', '-'], CONFIGMAP('warned'));
    assert.equal(warned.code, 0, warned.stderr);
    assert.equal(warned.stderr.trim(), 'Warning: unknown field "metadata.foo"');
    const stored = JSON.parse(await ok(['get', 'configmap', 'warned', '-o', 'json'])) as { metadata: Record<string, unknown>; data: Record<string, string> };
    assert.equal(stored.metadata.foo, undefined, 'the unknown field is dropped, not stored');
    assert.deepEqual(stored.data, { a: '1' });

    const ignored = await kubectl(['create', '--validate=false', '-f', '-'], CONFIGMAP('ignored'));
    assert.equal(ignored.code, 0, ignored.stderr);
    assert.equal(ignored.stderr, '', 'Ignore: no warning');

    // On an existing object apply sends a patch: Strict refuses it too, and the object is unchanged.
    const patched = await kubectl(['apply', '-f', '-'], CONFIGMAP('warned').replace('"1"', '"2"'));
    assert.equal(patched.code, 1);
    assert.match(patched.stderr, /strict decoding error: unknown field "metadata\.foo"/);
    assert.equal(await ok(['get', 'configmap', 'warned', '-o', 'jsonpath={.data.a}']), '1');
  });

  it('a client that names no fieldValidation gets the server default, Warn: a 299 Warning header per unknown field', async () => {
    const res = await fetch(`${base}/api/v1/namespaces/default/configmaps`, {
      method: 'POST', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'raw', foo: 1 }, data: { a: '1' }, extra: { b: 2 } }),
    });
    assert.equal(res.status, 201);
    // In the order the body has them, as the strict decoder meets them.
    assert.equal(res.headers.get('warning'), '299 - "unknown field \\"metadata.foo\\"", 299 - "unknown field \\"extra\\""');
    const body = await res.json() as Record<string, unknown>;
    assert.equal(body.extra, undefined);
    const bad = await fetch(`${base}/api/v1/namespaces/default/configmaps?fieldValidation=Loose`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"metadata":{"name":"x"}}' });
    assert.equal(bad.status, 400);
    // A merge patch under Strict: 422 on the field "patch", as upstream's JSON patcher answers.
    const merge = await fetch(`${base}/api/v1/namespaces/default/configmaps/raw?fieldValidation=Strict`, { method: 'PATCH', headers: { 'Content-Type': 'application/merge-patch+json' }, body: '{"data":{"a":"2"},"spec":{"x":1}}' });
    assert.equal(merge.status, 422);
    const status = await merge.json() as { reason: string; message: string; details: { causes: { field: string }[] } };
    assert.equal(status.reason, 'Invalid');
    assert.match(status.message, /^ "" is invalid: patch: Invalid value: ".*": strict decoding error: unknown field "spec"$/);
    assert.deepEqual(status.details.causes.map((c) => c.field), ['patch']);
    const unchanged = await (await fetch(`${base}/api/v1/namespaces/default/configmaps/raw`)).json() as { data: Record<string, string> };
    assert.deepEqual(unchanged.data, { a: '1' });
  });

  it('every object the run serves passes its own field validation (so a client\'s patch is never warned about the bench\'s fields)', async () => {
    let checked = 0;
    for (const r of RESOURCES) {
      const schema = schemaOf(r);
      if (schema === undefined) continue;
      const list = await (await fetch(`${base}/${r.group === '' ? 'api' : `apis/${r.group}`}/${r.version}/${r.plural}`)).json() as { items: Record<string, unknown>[] };
      for (const o of list.items) {
        checked++;
        assert.deepEqual(dropUnknownFields(schema, { ...o, apiVersion: r.apiVersion, kind: r.kind }), [], `${r.kind} ${JSON.stringify(o.metadata)}`);
      }
    }
    assert.ok(checked > 10, `${checked} objects checked`);
  });

  it('get nodes: a node shut down for longer than the grace period is NotReady (Ready Unknown), the others stay Ready', async () => {
    const dir = mkdtempSync('/tmp/lode-kubectl-shutdown-');
    const run = await holdRun(SHUTDOWN_SCENARIO, dir);
    const saved = env;
    env = { ...saved, KUBECONFIG: run.kubeconfig };
    try {
      const rows = (await ok(['get', 'nodes', '--no-headers'])).trim().split('\n').map((l) => l.split(/\s+/));
      assert.deepEqual(rows.map((r) => [r[0], r[1]]), [['api-node', 'Ready'], ['plain-node', 'NotReady']]);
      const ready = await ok(['get', 'node', 'plain-node', '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status} {.status.conditions[?(@.type=="Ready")].reason}']);
      assert.equal(ready, 'Unknown NodeStatusUnknown');
      const unknown = await kubectl(['wait', '--for=condition=Ready=Unknown', 'node/plain-node', '--timeout=10s'], undefined, 15_000);
      assert.equal(unknown.stdout.trim(), 'node/plain-node condition met', unknown.stderr);
    } finally {
      env = saved;
      run.child.kill('SIGINT');
      assert.equal(await run.exited, 0);
      if (existsSync(dir) && readdirSync(dir).length === 0) rmdirSync(dir);
    }
  });
});
