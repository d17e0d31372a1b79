// The API server over real HTTP on a real object store and runtime (no drivers): what each verb answers, in bodies and codes a client can rely on.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ObjectStore } from '../../../src/bench/api/object-store.js';
import { EventLog } from '../../../src/bench/api/event-log.js';
import { VIRTUAL_EPOCH_MS, VirtualClock } from '../../../src/bench/clock/virtual-clock.js';
import { Runtime } from '../../../src/bench/runtime/runtime.js';
import { ApiServer } from '../../../src/bench/apiserver/server.js';
import { RequestCounts } from '../../../src/bench/api/request-counts.js';
import { decodeObject, encodeObject } from '../../../src/bench/apiserver/protobuf/envelope.js';
import { readWatchFrames } from '../../../src/bench/apiserver/protobuf/watch-frame.js';
import type { Json } from '../../../src/bench/apiserver/patch/merge-patch.js';

type Obj = Record<string, unknown> & { metadata?: Record<string, unknown> };

const clock = new VirtualClock();
const store = new ObjectStore(clock);
const events = new EventLog(() => clock.now());
const runtime = new Runtime(clock);
const stopHold = new AbortController();
const requests: string[] = [];
const counts = new RequestCounts();
const server = new ApiServer({ host: '127.0.0.1', port: 0, historyLimit: 20, onRequest: (client, verb, resource, sub) => requests.push(`${client} ${verb} ${resource}${sub ? `/${sub}` : ''}`) });
let base = '';
let held: Promise<void>;

async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: Obj; type: string }> {
  const res = await fetch(base + path, {
    method,
    headers: { 'User-Agent': 'api-test/1.0', ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}), ...headers },
    ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text.startsWith('{') ? JSON.parse(text) as Obj : { text }, type: res.headers.get('content-type') ?? '' };
}

/** Reads a watch stream until `until` says enough (or the server ends it). */
async function watchLines(path: string, until: (events: Obj[]) => boolean, headers: Record<string, string> = {}): Promise<Obj[]> {
  const ac = new AbortController();
  const res = await fetch(base + path, { headers, signal: ac.signal });
  const out: Obj[] = [];
  let buf = '';
  const reader = res.body!.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buf += Buffer.from(value).toString('utf8');
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        out.push(JSON.parse(buf.slice(0, nl)) as Obj);
        buf = buf.slice(nl + 1);
      }
      if (until(out)) break;
    }
  } finally {
    ac.abort();
  }
  return out;
}

const cm = (name: string, data: Record<string, string> = {}): Obj => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data });

before(async () => {
  base = await server.start();
  server.attach({ store, events, clock, external: runtime.external, driverName: 'lode.csi.dev', requests: counts });
  held = runtime.hold(stopHold.signal);
});

after(async () => {
  stopHold.abort();
  await held;
  await server.close();
});

describe('the bench API server', () => {
  it('serves discovery in the aggregated form when asked, naming it in the Content-Type', async () => {
    const agg = await call('GET', '/api', undefined, { Accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json' });
    assert.equal(agg.type, 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList');
    const core = (agg.body.items as { metadata: { name: string }; versions: { resources: { resource: string; subresources?: unknown[] }[] }[] }[]);
    assert.deepEqual(core.map((g) => g.metadata.name), ['']);
    assert.ok(core[0]!.versions[0]!.resources.find((r) => r.resource === 'pods')?.subresources?.length);
    const legacy = await call('GET', '/apis', undefined, { Accept: 'application/json, */*' });
    assert.equal(legacy.body.kind, 'APIGroupList');
    assert.ok((legacy.body.groups as { name: string }[]).some((g) => g.name === 'coordination.k8s.io'));
    const v1 = await call('GET', '/api/v1');
    const rs = v1.body.resources as { name: string; shortNames?: string[]; verbs: string[] }[];
    assert.deepEqual(rs.find((r) => r.name === 'pods')?.shortNames, ['po']);
    assert.deepEqual(rs.find((r) => r.name === 'pods/status')?.verbs, ['get', 'patch', 'update']);
    assert.equal((await call('GET', '/version')).body.minor, '32');
    const v3 = await call('GET', '/openapi/v3');
    const gv = (v3.body.paths as Record<string, { serverRelativeURL: string }>)['apis/snapshot.storage.k8s.io/v1'];
    assert.ok(gv, 'every served group-version has an OpenAPI v3 document, CRD groups too');
    const doc = await call('GET', gv.serverRelativeURL);
    const patchOp = (doc.body.paths as Record<string, { patch: { 'x-kubernetes-group-version-kind': { kind: string }; parameters: { name: string }[]; requestBody?: unknown } }>)['/apis/snapshot.storage.k8s.io/v1/namespaces/{namespace}/volumesnapshots/{name}']!.patch;
    assert.equal(patchOp['x-kubernetes-group-version-kind'].kind, 'VolumeSnapshot');
    assert.deepEqual(patchOp.parameters.map((p) => p.name), ['fieldValidation'], 'kubectl apply leaves validation to a server that takes fieldValidation');
    assert.equal(patchOp.requestBody, undefined, 'no request body: kubectl then builds patches from its own types');
    const v2 = Buffer.from(await (await fetch(`${base}/openapi/v2`)).arrayBuffer());
    assert.deepEqual([...v2.subarray(0, 5)], [0x0a, 0x03, 0x32, 0x2e, 0x30], 'protobuf field 1 (swagger) = "2.0"');
    assert.equal((await call('GET', '/apis/no.such.group/v1')).status, 404);
  });

  it('answers a missing object with a NotFound Status naming it', async () => {
    const r = await call('GET', '/api/v1/namespaces/default/pods/nope');
    assert.equal(r.status, 404);
    assert.deepEqual(r.body, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'pods "nope" not found', reason: 'NotFound', details: { name: 'nope', group: '', kind: 'pods' }, code: 404 });
    const sc = await call('GET', '/apis/storage.k8s.io/v1/storageclasses/none');
    assert.equal(sc.body.message, 'storageclasses.storage.k8s.io "none" not found');
  });

  it('creates (201), refuses a duplicate (409 AlreadyExists) and generates names', async () => {
    const c = await call('POST', '/api/v1/namespaces/default/configmaps', cm('one', { a: '1' }));
    assert.equal(c.status, 201);
    assert.equal(c.body.kind, 'ConfigMap');
    assert.match(String(c.body.metadata?.uid), /^[0-9a-f-]{36}$/);
    const dup = await call('POST', '/api/v1/namespaces/default/configmaps', cm('one'));
    assert.equal(dup.status, 409);
    assert.equal(dup.body.reason, 'AlreadyExists');
    const gen = await call('POST', '/api/v1/namespaces/default/configmaps', { metadata: { generateName: 'gen-' } });
    assert.match(String(gen.body.metadata?.name), /^gen-[a-z0-9]{5}$/);
    const other = await call('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'x', namespace: 'elsewhere' } });
    assert.equal(other.status, 400, 'a body namespace other than the URL\'s is refused');
    const noName = await call('POST', '/api/v1/namespaces/default/configmaps', { metadata: {} });
    assert.equal(noName.status, 422);
    assert.equal(noName.body.reason, 'Invalid');
    assert.deepEqual((noName.body.details as { causes: unknown[] }).causes, [{ reason: 'FieldValueRequired', message: 'Required value: name or generateName is required', field: 'metadata.name' }]);
    const withRv = await call('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'rv', resourceVersion: '3' } });
    assert.equal(withRv.status, 400);
    assert.ok(events.events.some((e) => e.reason === 'ApiWrite' && e.source === 'api/api-test' && e.name === 'one'), 'each client write is in the event log');
    assert.ok(requests.includes('api-test create configmaps'), 'the counting hook hears each request');
  });

  it('holds a leader-election Lease: create, renew with its resourceVersion, and a stale renewal gets 409 Conflict', async () => {
    const path = '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases';
    const lease = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'lode-leader' }, spec: { holderIdentity: 'a', leaseDurationSeconds: 15, renewTime: '2026-01-01T00:00:00.000000Z' } };
    const created = await call('POST', path, lease);
    assert.equal(created.status, 201);
    const renewed = await call('PUT', `${path}/lode-leader`, { ...created.body, spec: { ...(created.body.spec as object), renewTime: '2026-01-01T00:00:02.000000Z' } });
    assert.equal(renewed.status, 200);
    assert.notEqual(renewed.body.metadata?.resourceVersion, created.body.metadata?.resourceVersion);
    // A second candidate that read the Lease before the renewal tries to take it.
    const stale = await call('PUT', `${path}/lode-leader`, { ...created.body, spec: { ...(created.body.spec as object), holderIdentity: 'b' } });
    assert.equal(stale.status, 409);
    assert.equal(stale.body.reason, 'Conflict');
    assert.equal(stale.body.message, 'Operation cannot be fulfilled on leases.coordination.k8s.io "lode-leader": the object has been modified; please apply your changes to the latest version and try again');
    const now = await call('GET', `${path}/lode-leader`);
    assert.equal((now.body.spec as { holderIdentity: string }).holderIdentity, 'a');
    const renamed = await call('PUT', `${path}/lode-leader`, { ...now.body, metadata: { ...now.body.metadata, name: 'other' } });
    assert.equal(renamed.status, 400, 'the body must name the object of the URL');
  });

  it('keeps status out of main-resource writes and spec out of status writes', async () => {
    const path = '/api/v1/namespaces/default/persistentvolumeclaims';
    const created = await call('POST', path, { metadata: { name: 'claim' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } }, status: { phase: 'Bound' } });
    assert.deepEqual(created.body.status, { phase: 'Pending' }, 'a create starts from the status the registry sets');
    const st = await call('PUT', `${path}/claim/status`, { ...created.body, spec: { resources: { requests: { storage: '9Gi' } } }, status: { phase: 'Lost' } });
    assert.equal(st.status, 200);
    assert.deepEqual(st.body.status, { phase: 'Lost' });
    assert.equal((st.body.spec as { resources: { requests: { storage: string } } }).resources.requests.storage, '1Gi');
    const main = await call('PATCH', `${path}/claim`, JSON.stringify({ metadata: { labels: { l: 'v' } }, status: { phase: 'Bound' } }), { 'Content-Type': 'application/merge-patch+json' });
    assert.deepEqual(main.body.status, { phase: 'Lost' });
    assert.deepEqual(main.body.metadata?.labels, { l: 'v' });
    assert.equal((await call('GET', '/api/v1/namespaces/default/configmaps/one/status')).status, 404, 'no status subresource on kinds without one');
  });

  it('keeps an idle connection 90 s, not the 5 s of Node.js, so a client reusing it does not race its close', async () => {
    const res = await fetch(`${base}/api/v1/namespaces/default/configmaps`);
    await res.text();
    assert.equal(res.headers.get('keep-alive'), 'timeout=90');
  });

  it('patches by each content type', async () => {
    const path = '/api/v1/namespaces/default/configmaps/one';
    const merge = await call('PATCH', path, '{"data":{"b":"2"}}', { 'Content-Type': 'application/merge-patch+json' });
    assert.deepEqual(merge.body.data, { a: '1', b: '2' });
    const json = await call('PATCH', path, '[{"op":"remove","path":"/data/a"}]', { 'Content-Type': 'application/json-patch+json' });
    assert.deepEqual(json.body.data, { b: '2' });
    const smp = await call('PATCH', path, '{"data":{"$patch":"replace","c":"3"}}', { 'Content-Type': 'application/strategic-merge-patch+json' });
    assert.deepEqual(smp.body.data, { c: '3' });
    const bad = await call('PATCH', path, '[{"op":"test","path":"/data/c","value":"no"}]', { 'Content-Type': 'application/json-patch+json' });
    assert.equal(bad.status, 422);
    const conflict = await call('PATCH', path, JSON.stringify({ metadata: { resourceVersion: '1' }, data: { d: '4' } }), { 'Content-Type': 'application/merge-patch+json' });
    assert.equal(conflict.status, 409, 'a resourceVersion in the patch is a precondition');
    const snap = await call('POST', '/apis/snapshot.storage.k8s.io/v1/namespaces/default/volumesnapshots', { metadata: { name: 's' }, spec: { source: { persistentVolumeClaimName: 'claim' } } });
    assert.equal(snap.status, 201);
    const crdSmp = await call('PATCH', '/apis/snapshot.storage.k8s.io/v1/namespaces/default/volumesnapshots/s', '{"metadata":{"labels":{"a":"b"}}}', { 'Content-Type': 'application/strategic-merge-patch+json' });
    assert.equal(crdSmp.status, 415);
  });

  it('lists with selectors and pages, and refuses field labels the kind does not index', async () => {
    for (const n of ['p1', 'p2', 'p3']) await call('POST', '/api/v1/namespaces/team/configmaps', { metadata: { name: n, labels: { tier: n === 'p2' ? 'db' : 'web' } } });
    const web = await call('GET', '/api/v1/namespaces/team/configmaps?labelSelector=tier%20in%20(web)');
    assert.deepEqual((web.body.items as Obj[]).map((o) => o.metadata?.name), ['p1', 'p3']);
    assert.equal(web.body.kind, 'ConfigMapList');
    const byName = await call('GET', '/api/v1/configmaps?fieldSelector=metadata.name%3Dp2');
    assert.deepEqual((byName.body.items as Obj[]).map((o) => o.metadata?.namespace), ['team']);
    const page1 = await call('GET', '/api/v1/namespaces/team/configmaps?limit=2');
    assert.equal((page1.body.items as Obj[]).length, 2);
    const meta = page1.body.metadata as { continue: string; remainingItemCount: number };
    assert.equal(meta.remainingItemCount, 1);
    const page2 = await call('GET', `/api/v1/namespaces/team/configmaps?limit=2&continue=${meta.continue}`);
    assert.deepEqual((page2.body.items as Obj[]).map((o) => o.metadata?.name), ['p3']);
    const bad = await call('GET', '/api/v1/configmaps?fieldSelector=data.x%3D1');
    assert.equal(bad.status, 400);
    assert.equal(bad.body.reason, 'BadRequest');
    const ns = await call('GET', '/api/v1/namespaces');
    assert.deepEqual((ns.body.items as Obj[]).map((o) => o.metadata?.name), ['default', 'kube-node-lease', 'kube-public', 'kube-system', 'team']);
    const table = await call('GET', '/api/v1/namespaces/team/configmaps', undefined, { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json' });
    assert.equal(table.body.kind, 'Table');
    assert.equal(table.type, 'application/json;as=Table;v=v1;g=meta.k8s.io');
    assert.equal(((table.body.rows as { object: Obj }[])[0]!.object).kind, 'PartialObjectMetadata', 'rows carry metadata by default: kubectl -A reads the namespace from it');
  });

  it('deletes: finalizers hold an object, preconditions guard it, Orphan releases its dependents', async () => {
    const path = '/api/v1/namespaces/default/configmaps';
    const owner = await call('POST', path, { metadata: { name: 'owner', finalizers: ['example.com/hold'] } });
    const ownerUid = String(owner.body.metadata?.uid);
    await call('POST', path, { metadata: { name: 'dependent', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: ownerUid }] } });
    const wrongUid = await call('DELETE', `${path}/owner`, { preconditions: { uid: 'not-it' } });
    assert.equal(wrongUid.status, 409);
    const fg = await call('DELETE', `${path}/owner`, { propagationPolicy: 'Foreground' });
    assert.equal(fg.status, 400, 'Foreground is refused, not silently done in the background');
    const held = await call('DELETE', `${path}/owner`, { propagationPolicy: 'Orphan' });
    assert.equal(held.status, 200);
    assert.ok(held.body.metadata?.deletionTimestamp, 'a finalizer turns delete into a deletionTimestamp');
    const dep = await call('GET', `${path}/dependent`);
    assert.deepEqual(dep.body.metadata?.ownerReferences ?? [], [], 'Orphan removed the owner reference');
    const done = await call('PATCH', `${path}/owner`, '{"metadata":{"finalizers":null}}', { 'Content-Type': 'application/merge-patch+json' });
    assert.equal(done.status, 200);
    assert.equal((await call('GET', `${path}/owner`)).status, 404, 'the last finalizer gone, the object is gone');
    const gone = await call('DELETE', `${path}/dependent`);
    assert.equal(gone.body.kind, 'Status');
    assert.equal(gone.body.status, 'Success');
    assert.deepEqual(gone.body.details, { name: 'dependent', group: '', kind: 'configmaps', uid: dep.body.metadata?.uid });
    assert.equal((await call('DELETE', `${path}/dependent`)).status, 404);
  });

  it('watches from a resourceVersion, across a delete, and answers a too-old one with 410 Expired', async () => {
    const path = '/api/v1/namespaces/w/configmaps';
    const a = await call('POST', path, { metadata: { name: 'a' } });
    const from = String(a.body.metadata?.resourceVersion);
    await call('DELETE', `${path}/a`);
    await call('POST', path, { metadata: { name: 'b' } });
    const seen = await watchLines(`${path}?watch=true&resourceVersion=${from}`, (e) => e.length >= 2);
    assert.deepEqual(seen.map((e) => `${e.type} ${(e.object as Obj).metadata?.name}`), ['DELETED a', 'ADDED b']);
    const deletedRv = Number((seen[0]!.object as Obj).metadata?.resourceVersion);
    assert.ok(deletedRv > Number(from), 'a DELETED event has a resourceVersion of its own');
    // Resuming from the DELETED event must not replay it.
    const resumed = await watchLines(`${path}?watch=true&resourceVersion=${deletedRv}`, (e) => e.length >= 1);
    assert.equal(`${resumed[0]!.type} ${(resumed[0]!.object as Obj).metadata?.name}`, 'ADDED b');
    const initial = await watchLines(`${path}?watch=true`, (e) => e.length >= 1);
    assert.equal(initial[0]!.type, 'ADDED', 'no resourceVersion: the current state first, as ADDED');
    // Push the first changes out of the 20-change history.
    for (let i = 0; i < 25; i++) await call('PATCH', '/api/v1/namespaces/default/configmaps/one', JSON.stringify({ data: { n: String(i) } }), { 'Content-Type': 'application/merge-patch+json' });
    const old = await watchLines(`${path}?watch=true&resourceVersion=${from}`, (e) => e.length >= 1);
    assert.equal(old[0]!.type, 'ERROR');
    assert.equal((old[0]!.object as Obj).code, 410);
    assert.equal((old[0]!.object as Obj).reason, 'Expired');
    const page = await call('GET', '/api/v1/namespaces/team/configmaps?limit=1');
    const token = (page.body.metadata as { continue: string }).continue;
    for (let i = 0; i < 25; i++) await call('PATCH', '/api/v1/namespaces/default/configmaps/one', JSON.stringify({ data: { m: String(i) } }), { 'Content-Type': 'application/merge-patch+json' });
    const stale = await call('GET', `/api/v1/namespaces/team/configmaps?limit=1&continue=${token}`);
    assert.equal(stale.status, 410, 'a continue token older than the history is refused');
  });

  it('sends a Table per watch event, the columns with the first only', async () => {
    const path = '/api/v1/namespaces/team/configmaps';
    const seen = await watchLines(`${path}?watch=true`, (e) => e.length >= 2, { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' });
    const first = seen[0]!.object as { kind: string; columnDefinitions: unknown[] };
    const second = seen[1]!.object as { kind: string; columnDefinitions: unknown[] };
    assert.equal(first.kind, 'Table');
    assert.ok(first.columnDefinitions.length > 0);
    assert.deepEqual(second.columnDefinitions, []);
  });

  it('ends the initial events of a sendInitialEvents watch with a bookmark, as watch-list clients wait for', async () => {
    const seen = await watchLines('/api/v1/namespaces/team/configmaps?watch=true&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan', (e) => e.some((x) => x.type === 'BOOKMARK'));
    assert.deepEqual(seen.map((e) => e.type), ['ADDED', 'ADDED', 'ADDED', 'BOOKMARK']);
    assert.deepEqual((seen[3]!.object as Obj).metadata?.annotations, { 'k8s.io/initial-events-end': 'true' });
  });

  it('stores a synthesised namespace once a client writes to it', async () => {
    const before = await call('GET', '/api/v1/namespaces/team');
    assert.equal((before.body.status as { phase: string }).phase, 'Active');
    const labelled = await call('PATCH', '/api/v1/namespaces/team', '{"metadata":{"labels":{"owner":"me"}}}', { 'Content-Type': 'application/strategic-merge-patch+json' });
    assert.equal(labelled.status, 200);
    assert.equal(store.get('Namespace', 'team')?.metadata?.labels?.owner, 'me');
    assert.equal((await call('POST', '/api/v1/namespaces', { metadata: { name: 'default' } })).status, 409, 'the system namespaces exist');
  });

  it('scales a StatefulSet through its scale subresource, as kubectl scale does', async () => {
    const path = '/apis/apps/v1/namespaces/default/statefulsets';
    await call('POST', path, { metadata: { name: 'db' }, spec: { replicas: 3, selector: { matchLabels: { app: 'db' } }, template: { metadata: { labels: { app: 'db' } }, spec: { containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.9' }] } } } });
    const scale = await call('GET', `${path}/db/scale`);
    assert.deepEqual({ kind: scale.body.kind, apiVersion: scale.body.apiVersion, spec: scale.body.spec, status: scale.body.status }, { kind: 'Scale', apiVersion: 'autoscaling/v1', spec: { replicas: 3 }, status: { replicas: 0, selector: 'app=db' } });
    const patched = await call('PATCH', `${path}/db/scale`, '{"spec":{"replicas":1}}', { 'Content-Type': 'application/merge-patch+json' });
    assert.deepEqual(patched.body.spec, { replicas: 1 });
    assert.equal(store.get('StatefulSet', 'db', 'default')?.spec?.replicas, 1);
    const stale = await call('PUT', `${path}/db/scale`, scale.body);
    assert.equal(stale.status, 409, 'the Scale\'s resourceVersion is the StatefulSet\'s');
    const negative = await call('PATCH', `${path}/db/scale`, '{"spec":{"replicas":-1}}', { 'Content-Type': 'application/merge-patch+json' });
    assert.equal(negative.status, 422);
    const v1 = await call('GET', '/apis/apps/v1');
    assert.ok((v1.body.resources as { name: string }[]).some((r) => r.name === 'statefulsets/scale'));
    assert.equal((await call('GET', '/api/v1/namespaces/default/pods/x/scale')).status, 404, 'pods have no scale subresource');
  });

  it('deletes a collection by selector, and a dry run writes nothing', async () => {
    const path = '/api/v1/namespaces/dc/configmaps';
    for (const [n, tier] of [['a', 'x'], ['b', 'x'], ['c', 'y']]) await call('POST', path, { metadata: { name: n, labels: { tier } } });
    const dry = await call('POST', `${path}?dryRun=All`, { metadata: { name: 'dry' } });
    assert.equal(dry.status, 200);
    assert.equal(store.get('ConfigMap', 'dry', 'dc'), undefined, 'dryRun=All stores nothing');
    const gone = await call('DELETE', `${path}?labelSelector=tier%3Dx`);
    assert.equal(gone.status, 200);
    assert.deepEqual(store.list('ConfigMap', 'dc').map((o) => o.metadata?.name), ['c']);
  });

  it('serves the run\'s event log as Events, found by the field selector kubectl describe sends, and watched as recorded', async () => {
    const pod = { kind: 'Pod', metadata: { name: 'ev-pod', namespace: 'evns', uid: 'u-ev' } };
    events.record('default-scheduler', pod, 'Normal', 'Scheduled', 'Successfully assigned evns/ev-pod to n1');
    const path = '/api/v1/namespaces/evns/events';
    const found = await call('GET', `${path}?fieldSelector=involvedObject.name%3Dev-pod%2CinvolvedObject.namespace%3Devns%2CinvolvedObject.uid%3Du-ev&limit=500`);
    assert.deepEqual((found.body.items as { reason: string }[]).map((e) => e.reason), ['Scheduled']);
    assert.equal(found.body.kind, 'EventList');
    // Recorded once the watch has sent the current state, so it is open: the new Event must follow.
    const seen = await watchLines(`${path}?watch=true`, (e) => {
      if (e.length === 1) events.record('kubelet/n1', pod, 'Warning', 'FailedMount', 'no volume');
      return e.length >= 2;
    });
    assert.deepEqual(seen.map((e) => `${e.type} ${(e.object as { reason: string }).reason}`), ['ADDED Scheduled', 'ADDED FailedMount']);
    assert.equal(store.count('Event'), 0, 'served beside the store: no uid or resourceVersion taken from it');
  });

  it('shows times moved to the wall clock while the stored objects keep their virtual ones', async () => {
    // A bound against a wrong epoch, not a timing: unshifted, these read 2026-01-01, months from now.
    const nearNow = (text: unknown, what: string): void => {
      const off = Math.abs(Date.parse(String(text)) - Date.now());
      assert.ok(off < 5_000, `${what} ${String(text)} is ${off} ms from the wall clock`);
    };
    const created = await call('POST', '/api/v1/namespaces/default/configmaps', cm('wall-now'));
    assert.equal(created.status, 201);
    nearNow(created.body.metadata?.creationTimestamp, 'creationTimestamp');
    nearNow((await call('GET', '/api/v1/namespaces/default/configmaps/wall-now')).body.metadata?.creationTimestamp, 'read-back creationTimestamp');
    const stored = store.get('ConfigMap', 'wall-now', 'default')!.metadata!.creationTimestamp as unknown;
    assert.ok(stored instanceof Date, 'the store keeps a Date');
    assert.ok(stored.getTime() >= VIRTUAL_EPOCH_MS && stored.getTime() <= clock.date().getTime(), `stored ${stored.toISOString()} is virtual time`);
    const evs = await call('GET', '/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Dwall-now');
    const ev = (evs.body.items as { reason: string; firstTimestamp: string; lastTimestamp: string; metadata: { creationTimestamp: string } }[])[0]!;
    assert.equal(ev.reason, 'ApiWrite');
    nearNow(ev.lastTimestamp, 'event lastTimestamp');
    nearNow(ev.firstTimestamp, 'event firstTimestamp');
    nearNow(ev.metadata.creationTimestamp, 'event creationTimestamp');
    const tableAccept = { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' };
    const cell = (t: Obj, column: string): unknown => {
      const i = (t.columnDefinitions as { name: string }[]).findIndex((c) => c.name === column);
      assert.ok(i >= 0, `a ${column} column`);
      return (t.rows as { cells: unknown[] }[])[0]!.cells[i];
    };
    const age = cell((await call('GET', '/api/v1/namespaces/default/configmaps/wall-now', undefined, tableAccept)).body, 'Age');
    assert.match(String(age), /^\ds$/, `AGE of a just-created object: ${String(age)}`);
    const evTable = (await call('GET', '/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Dwall-now', undefined, tableAccept)).body;
    assert.match(String(cell(evTable, 'Last Seen')), /^\ds$/, 'LAST SEEN of a just-recorded event');
  });

  it('refuses methods a path does not take', async () => {
    assert.equal((await call('PUT', '/api/v1/namespaces/default/configmaps', {})).status, 405);
    assert.equal((await call('POST', '/api/v1/namespaces/default/configmaps/one', {})).status, 405);
    const node = await call('POST', '/api/v1/nodes', { metadata: { name: 'n' } });
    assert.equal(node.status, 405, 'nodes come from scenarios, with their drivers');
  });
});

describe('request counting', () => {
  it('counts each resource request of a client in the run\'s API requests, apart from the modelled components', async () => {
    await call('GET', '/api/v1/namespaces/default/configmaps');
    await call('GET', '/api/v1/namespaces/default/configmaps/none-such');
    await call('GET', '/api');
    const rows = counts.rows(clock.now()).filter((r) => r.client === 'external/api-test');
    const count = (verb: string, resource: string): number => rows.find((r) => r.verb === verb && r.resource === resource)?.count ?? 0;
    assert.ok(count('list', 'configmaps') >= 1);
    assert.ok(count('get', 'configmaps') >= 1, 'a GET answered 404 is a request too');
    assert.ok(rows.every((r) => r.resource !== ''), 'discovery is not counted as a resource request');
  });
});

describe('request bodies', () => {
  it('takes YAML as the API server does, and refuses other media types as unsupported, not as broken JSON', async () => {
    const yaml = await call('POST', '/api/v1/namespaces/default/configmaps', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: from-yaml}\ndata: {a: "1"}\n', { 'Content-Type': 'application/yaml' });
    assert.equal(yaml.status, 201);
    assert.equal((yaml.body.data as Record<string, string>).a, '1');
    const cbor = await call('POST', '/api/v1/namespaces/default/configmaps', '\u00a1', { 'Content-Type': 'application/cbor' });
    assert.equal(cbor.status, 415);
    assert.equal(cbor.body.reason, 'UnsupportedMediaType');
  });
});

describe('protobuf, as Go clients of built-in kinds speak it', () => {
  const PB = 'application/vnd.kubernetes.protobuf';

  async function raw(method: string, path: string, headers: Record<string, string>, body?: Buffer): Promise<{ status: number; bytes: Buffer; type: string }> {
    const res = await fetch(base + path, { method, headers: { 'User-Agent': 'proto-test/1.0', ...headers }, ...(body ? { body: new Uint8Array(body) } : {}) });
    return { status: res.status, bytes: Buffer.from(await res.arrayBuffer()), type: res.headers.get('content-type') ?? '' };
  }

  it('creates from a protobuf body and answers in protobuf when the Accept header asks for it first', async () => {
    const body = encodeObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'from-proto', labels: { via: 'proto' } }, data: { a: '1' } });
    const created = await raw('POST', '/api/v1/namespaces/default/configmaps', { 'Content-Type': PB, Accept: `${PB}, application/json` }, body);
    assert.equal(created.status, 201);
    assert.equal(created.type, PB);
    const o = decodeObject(created.bytes) as Obj;
    assert.equal(o.kind, 'ConfigMap');
    assert.deepEqual(o.data, { a: '1' });
    assert.ok(Number(o.metadata?.resourceVersion) > 0, 'the stored object comes back, with its resourceVersion');
    // The same object as JSON to a JSON client: the protobuf body was stored faithfully.
    const json = await call('GET', '/api/v1/namespaces/default/configmaps/from-proto');
    assert.deepEqual(json.body.metadata?.labels, { via: 'proto' });
    const list = await raw('GET', '/api/v1/namespaces/default/configmaps?labelSelector=via%3Dproto', { Accept: PB });
    const l = decodeObject(list.bytes) as { kind: string; items: Obj[]; metadata: { resourceVersion: string } };
    assert.equal(l.kind, 'ConfigMapList');
    assert.deepEqual(l.items.map((i) => i.metadata?.name), ['from-proto']);
    assert.ok(Number(l.metadata.resourceVersion) > 0);
  });

  it('sends errors as a protobuf Status, refuses an undecodable body with 400, and keeps custom resources JSON', async () => {
    const missing = await raw('GET', '/api/v1/namespaces/default/configmaps/none', { Accept: PB });
    assert.equal(missing.status, 404);
    const st = decodeObject(missing.bytes) as Obj;
    assert.equal(st.kind, 'Status');
    assert.equal(st.reason, 'NotFound');
    assert.equal(st.code, 404);
    const broken = await raw('POST', '/api/v1/namespaces/default/configmaps', { 'Content-Type': PB }, Buffer.from('k8s\u0000\n\u000fv1'));
    assert.equal(broken.status, 400);
    const crd = await raw('GET', '/apis/snapshot.storage.k8s.io/v1/volumesnapshotclasses', { Accept: `${PB}, application/json` });
    assert.equal(crd.status, 200);
    assert.equal(crd.type, 'application/json');
    const crdMissing = await raw('GET', '/apis/snapshot.storage.k8s.io/v1/volumesnapshotclasses/none', { Accept: `${PB}, application/json` });
    assert.equal(crdMissing.status, 404);
    assert.equal(crdMissing.type, 'application/json', 'a custom resource\'s error is JSON, as its objects are');
  });

  it('watches in length-delimited protobuf frames, each object enveloped', async () => {
    const list = await raw('GET', '/api/v1/namespaces/default/configmaps', { Accept: PB });
    const rv = (decodeObject(list.bytes) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
    const ac = new AbortController();
    const res = await fetch(`${base}/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=${rv}`, { headers: { Accept: PB }, signal: ac.signal });
    assert.equal(res.headers.get('content-type'), 'application/vnd.kubernetes.protobuf;stream=watch');
    await call('POST', '/api/v1/namespaces/default/configmaps', cm('watched-proto', { b: '2' }));
    await call('DELETE', '/api/v1/namespaces/default/configmaps/watched-proto');
    let buf = Buffer.alloc(0);
    const reader = res.body!.getReader();
    let events: { type: string; object: Json }[] = [];
    try {
      while (events.length < 2) {
        const { done, value } = await reader.read();
        if (done) break;
        buf = Buffer.concat([buf, Buffer.from(value)]);
        // Whole frames only: a frame may arrive in pieces.
        let end = 0;
        while (end + 4 <= buf.length && end + 4 + buf.readUInt32BE(end) <= buf.length) end += 4 + buf.readUInt32BE(end);
        events = readWatchFrames(buf.subarray(0, end));
      }
    } finally {
      ac.abort();
    }
    assert.deepEqual(events.map((e) => `${e.type} ${(e.object as Obj).metadata?.name}`), ['ADDED watched-proto', 'DELETED watched-proto']);
    assert.deepEqual((events[0]!.object as Obj).data, { b: '2' });
  });
});
