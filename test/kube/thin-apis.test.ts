// The driver's thin API client against a local HTTP(S) server: how each call is encoded, credentials and TLS, answers' dates, error mapping, the size bound, and cancellation.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import type * as net from 'node:net';
import type * as tls from 'node:tls';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { V1Lease } from '@kubernetes/client-node';
import { HttpTransport, requestSignal } from '../../src/kube/http-transport.js';
import type { KubeCredentials } from '../../src/kube/kube-config.js';
import { BearerToken } from '../../src/kube/bearer-token.js';
import { thinApis, type KubeApis } from '../../src/kube/thin-apis.js';
import { describeApiError, isConflict, isNotFound, KubeApiError, KubeResponseTooLargeError } from '../../src/kube/kube-errors.js';

interface Seen { method: string; url: string; headers: http.IncomingHttpHeaders; body: string; peer?: string }
type Answer = (seen: Seen) => { status: number; body: string } | undefined;

/** A local server that records each request and answers with `answer` (undefined: never answers). */
class RecordingServer {
  readonly seen: Seen[] = [];
  readonly sockets = new Set<net.Socket>();
  answer: Answer = () => ({ status: 200, body: '{}' });
  url = '';
  private server: http.Server | https.Server | undefined;

  async start(tlsOptions?: https.ServerOptions): Promise<void> {
    const handler = (req: http.IncomingMessage, res: http.ServerResponse): void => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const peer = (req.socket as tls.TLSSocket).getPeerCertificate?.().subject?.CN;
        const s: Seen = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), ...(typeof peer === 'string' ? { peer } : {}) };
        this.seen.push(s);
        const a = this.answer(s);
        if (a === undefined) return;
        res.writeHead(a.status, { 'Content-Type': 'application/json' });
        res.end(a.body);
      });
    };
    const server = tlsOptions ? https.createServer(tlsOptions, handler) : http.createServer(handler);
    server.on(tlsOptions ? 'secureConnection' : 'connection', (c: net.Socket) => { this.sockets.add(c); c.on('close', () => this.sockets.delete(c)); });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    this.server = server;
    this.url = `${tlsOptions ? 'https' : 'http'}://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  }

  last(): Seen {
    const s = this.seen.at(-1);
    assert.ok(s, 'a request reached the server');
    return s;
  }

  async stop(): Promise<void> {
    for (const c of this.sockets) c.destroy();
    await new Promise<void>((r) => this.server?.close(() => r()) ?? r());
  }
}

const srv = new RecordingServer();
let apis: KubeApis;
let transport: HttpTransport;
let dir = '';

before(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'lode-thin-'));
  await srv.start();
  transport = new HttpTransport({ server: srv.url, insecureSkipTlsVerify: false, token: BearerToken.fixed('tok') }, { userAgent: 'lode-driver/1 (n1)' });
  apis = thinApis(transport);
});
after(async () => {
  transport.close();
  await srv.stop();
  rmSync(dir, { recursive: true, force: true });
});

function call(seen: Seen): string {
  return `${seen.method} ${decodeURIComponent(seen.url)}`;
}

describe('request encoding', () => {
  it('puts each call\'s names in its path and its other parameters in the query, as the API spells them', async () => {
    await apis.core.readNode({ name: 'node-1' });
    assert.equal(call(srv.last()), 'GET /api/v1/nodes/node-1');
    await apis.core.listNode({});
    assert.equal(call(srv.last()), 'GET /api/v1/nodes');
    await apis.core.listPersistentVolume({ limit: 500, _continue: 'tok=en/1' });
    assert.equal(srv.last().url, '/api/v1/persistentvolumes?limit=500&continue=tok%3Den%2F1');
    await apis.core.listNamespacedPod({ namespace: 'kube-system', fieldSelector: 'spec.nodeName=', limit: 500 });
    assert.equal(srv.last().url, '/api/v1/namespaces/kube-system/pods?fieldSelector=spec.nodeName%3D&limit=500');
    await apis.storage.listNamespacedCSIStorageCapacity({ namespace: 'lode', labelSelector: 'csi.storage.k8s.io/drivername=lode.csi.dev' });
    assert.equal(call(srv.last()), 'GET /apis/storage.k8s.io/v1/namespaces/lode/csistoragecapacities?labelSelector=csi.storage.k8s.io/drivername=lode.csi.dev');
    await apis.core.readNamespacedPod({ namespace: 'ns', name: 'a b' });
    assert.equal(srv.last().url, '/api/v1/namespaces/ns/pods/a%20b', 'a name is one path segment');
    await apis.core.readPersistentVolume({ name: 'pv-1' });
    assert.equal(call(srv.last()), 'GET /api/v1/persistentvolumes/pv-1');
    await apis.core.readNamespacedPersistentVolumeClaim({ namespace: 'ns', name: 'c' });
    assert.equal(call(srv.last()), 'GET /api/v1/namespaces/ns/persistentvolumeclaims/c');
    await apis.storage.readStorageClass({ name: 'fast' });
    assert.equal(call(srv.last()), 'GET /apis/storage.k8s.io/v1/storageclasses/fast');
    await apis.core.listPersistentVolumeClaimForAllNamespaces({ resourceVersion: '0' });
    assert.equal(call(srv.last()), 'GET /api/v1/persistentvolumeclaims?resourceVersion=0');
    await apis.storage.listStorageClass({ resourceVersion: '0' });
    assert.equal(call(srv.last()), 'GET /apis/storage.k8s.io/v1/storageclasses?resourceVersion=0');
    await apis.coordination.readNamespacedLease({ namespace: 'lode', name: 'l' });
    assert.equal(call(srv.last()), 'GET /apis/coordination.k8s.io/v1/namespaces/lode/leases/l');
    for (const s of srv.seen) {
      assert.equal(s.headers['user-agent'], 'lode-driver/1 (n1)');
      assert.equal(s.headers.authorization, 'Bearer tok');
      assert.equal(s.headers.accept, 'application/json');
      assert.equal(s.body, '');
    }
  });

  it('sends bodies as JSON (dates as ISO text), delete options with the query, and a patch as a JSON Patch', async () => {
    await apis.core.deleteNamespacedPod({ namespace: 'ns', name: 'p', gracePeriodSeconds: 0, body: { gracePeriodSeconds: 0, preconditions: { uid: 'u1' } } });
    assert.equal(call(srv.last()), 'DELETE /api/v1/namespaces/ns/pods/p?gracePeriodSeconds=0');
    assert.equal(srv.last().headers['content-type'], 'application/json');
    assert.deepEqual(JSON.parse(srv.last().body), { gracePeriodSeconds: 0, preconditions: { uid: 'u1' } });
    await apis.core.deletePersistentVolume({ name: 'pv', body: { preconditions: { uid: 'u2' } }, propagationPolicy: 'Background', dryRun: 'All' });
    assert.equal(call(srv.last()), 'DELETE /api/v1/persistentvolumes/pv?propagationPolicy=Background&dryRun=All');
    assert.deepEqual(JSON.parse(srv.last().body), { preconditions: { uid: 'u2' } });
    await apis.core.deleteNamespacedPersistentVolumeClaim({ namespace: 'ns', name: 'c', body: { preconditions: { uid: 'u3' } } });
    assert.equal(call(srv.last()), 'DELETE /api/v1/namespaces/ns/persistentvolumeclaims/c');
    await apis.storage.deleteNamespacedCSIStorageCapacity({ namespace: 'lode', name: 'cap', body: {} });
    assert.equal(call(srv.last()), 'DELETE /apis/storage.k8s.io/v1/namespaces/lode/csistoragecapacities/cap');
    await apis.core.replacePersistentVolume({ name: 'pv', body: { metadata: { name: 'pv', resourceVersion: '7' } } });
    assert.equal(call(srv.last()), 'PUT /api/v1/persistentvolumes/pv');
    assert.deepEqual(JSON.parse(srv.last().body), { metadata: { name: 'pv', resourceVersion: '7' } });
    const at = new Date('2026-12-06T06:00:00.000Z');
    await apis.core.createNamespacedEvent({ namespace: 'default', body: { metadata: { name: 'e' }, involvedObject: { kind: 'Node', name: 'n1' }, lastTimestamp: at } });
    assert.equal(call(srv.last()), 'POST /api/v1/namespaces/default/events');
    assert.equal((JSON.parse(srv.last().body) as { lastTimestamp: string }).lastTimestamp, '2026-12-06T06:00:00.000Z');
    await apis.core.patchNamespacedEvent({ namespace: 'default', name: 'e', body: [{ op: 'replace', path: '/lastTimestamp', value: at.toISOString() }] });
    assert.equal(call(srv.last()), 'PATCH /api/v1/namespaces/default/events/e');
    assert.equal(srv.last().headers['content-type'], 'application/json-patch+json');
    assert.deepEqual(JSON.parse(srv.last().body), [{ op: 'replace', path: '/lastTimestamp', value: '2026-12-06T06:00:00.000Z' }]);
    const lease: V1Lease = { metadata: { name: 'l', namespace: 'lode' }, spec: { holderIdentity: 'n1', leaseDurationSeconds: 15 } };
    await apis.coordination.createNamespacedLease({ namespace: 'lode', body: lease });
    assert.equal(call(srv.last()), 'POST /apis/coordination.k8s.io/v1/namespaces/lode/leases');
    await apis.coordination.replaceNamespacedLease({ namespace: 'lode', name: 'l', body: lease });
    assert.equal(call(srv.last()), 'PUT /apis/coordination.k8s.io/v1/namespaces/lode/leases/l');
    assert.deepEqual(JSON.parse(srv.last().body), lease);
  });

  it('hands back the answer with its timestamps as Dates, and labels and annotations as written', async () => {
    srv.answer = () => ({ status: 200, body: JSON.stringify({ metadata: { name: 'l', creationTimestamp: '2026-12-06T05:00:00Z', labels: { renewTime: '2026-01-01T00:00:00Z' }, annotations: { startTime: 'soon' } }, spec: { renewTime: '2026-12-06T05:59:59.123456Z' } }) });
    try {
      const l = await apis.coordination.readNamespacedLease({ namespace: 'lode', name: 'l' });
      assert.ok(l.metadata?.creationTimestamp instanceof Date);
      assert.equal(l.metadata.creationTimestamp.toISOString(), '2026-12-06T05:00:00.000Z');
      assert.ok(l.spec?.renewTime instanceof Date);
      assert.deepEqual(l.metadata.labels, { renewTime: '2026-01-01T00:00:00Z' });
      assert.deepEqual(l.metadata.annotations, { startTime: 'soon' });
    } finally {
      srv.answer = () => ({ status: 200, body: '{}' });
    }
  });

  it('hands back a list\'s continue token as client-node names it, so paging goes on', async () => {
    srv.answer = (s) => ({ status: 200, body: JSON.stringify(s.url.includes('continue=') ? { metadata: {}, items: [{ metadata: { name: 'b' } }] } : { metadata: { continue: 'page-2', resourceVersion: '9' }, items: [{ metadata: { name: 'a' } }] }) });
    try {
      const first = await apis.core.listPersistentVolume({ limit: 1 });
      assert.deepEqual(first.metadata, { _continue: 'page-2', resourceVersion: '9' });
      const second = await apis.core.listPersistentVolume({ limit: 1, _continue: first.metadata?._continue });
      assert.equal(srv.last().url, '/api/v1/persistentvolumes?limit=1&continue=page-2');
      assert.equal(second.items[0]?.metadata?.name, 'b');
      assert.equal(second.metadata?._continue, undefined);
    } finally {
      srv.answer = () => ({ status: 200, body: '{}' });
    }
  });
});

describe('errors', () => {
  it('carry the status and the Status body, as the error helpers read them', async () => {
    const status = (code: number, message: string): string => JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, message });
    srv.answer = (s) => s.url.includes('missing') ? { status: 404, body: status(404, 'pods "missing" not found') }
      : s.body.includes('taken') ? { status: 409, body: status(409, 'leases "taken" already exists') }
        : { status: 500, body: 'not json at all' };
    try {
      const notFound = await apis.core.readNamespacedPod({ namespace: 'ns', name: 'missing' }).then(() => undefined, (e: unknown) => e);
      assert.ok(notFound instanceof KubeApiError);
      assert.equal(notFound.code, 404);
      assert.equal(JSON.parse(notFound.body).message, 'pods "missing" not found');
      assert.ok(isNotFound(notFound) && !isConflict(notFound));
      assert.equal(describeApiError(notFound, 'get pod ns/missing'), 'get pod ns/missing: the API server answered 404: pods "missing" not found');
      const conflict = await apis.coordination.createNamespacedLease({ namespace: 'lode', body: { metadata: { name: 'taken' } } }).then(() => undefined, (e: unknown) => e);
      assert.ok(isConflict(conflict) && !isNotFound(conflict));
      const other = await apis.core.readNode({ name: 'x' }).then(() => undefined, (e: unknown) => e);
      assert.equal(describeApiError(other, 'get node x'), 'get node x: the API server answered 500: GET /api/v1/nodes/x: HTTP 500: not json at all');
      srv.answer = () => ({ status: 401, body: status(401, 'Unauthorized') });
      const rejected = await apis.core.readNode({ name: 'x' }).then(() => undefined, (e: unknown) => e);
      assert.match(describeApiError(rejected, 'get node x'), /rejected the credentials \(401 Unauthorized\)/);
      srv.answer = () => ({ status: 200, body: '{"truncated":' });
      await assert.rejects(apis.core.readNode({ name: 'x' }), /GET \/api\/v1\/nodes\/x: the API server answered 200 with a body that is not JSON/);
    } finally {
      srv.answer = () => ({ status: 200, body: '{}' });
    }
  });

  it('refuse an answer past the size bound, saying so', async () => {
    const small = new HttpTransport({ server: srv.url, insecureSkipTlsVerify: false }, { userAgent: 'x', maxResponseBytes: 1000 });
    srv.answer = () => ({ status: 200, body: JSON.stringify({ items: Array.from({ length: 100 }, (_, i) => ({ metadata: { name: `pv-${i}` } })) }) });
    try {
      const err = await thinApis(small).core.listPersistentVolume({}).then(() => undefined, (e: unknown) => e);
      assert.ok(err instanceof KubeResponseTooLargeError, String(err));
      assert.equal(describeApiError(err, 'list persistentvolumes'), 'list persistentvolumes: GET /api/v1/persistentvolumes: the answer is larger than 1000 bytes, more than the driver keeps; not read');
    } finally {
      small.close();
      srv.answer = () => ({ status: 200, body: '{}' });
    }
  });

  it('a connection refused is a failure to reach the server', async () => {
    const closed = new RecordingServer();
    await closed.start();
    const url = closed.url;
    await closed.stop();
    const t = new HttpTransport({ server: url, insecureSkipTlsVerify: false }, { userAgent: 'x' });
    const err = await thinApis(t).core.readNode({ name: 'n' }).then(() => undefined, (e: unknown) => e);
    assert.match(describeApiError(err, 'get node n'), /^get node n: the API server could not be reached: .*ECONNREFUSED/);
    t.close();
  });
});

describe('credentials and cancellation', () => {
  it('sends a rotated token file\'s new token after a 401, once, and basic auth when that is the user', async () => {
    const file = path.join(dir, 'token');
    writeFileSync(file, 'old');
    const token = BearerToken.fromFile(file);
    token.value();
    writeFileSync(file, 'new');
    srv.answer = (s) => s.headers.authorization === 'Bearer new' ? { status: 200, body: '{"metadata":{"name":"n"}}' } : { status: 401, body: '{}' };
    const t = new HttpTransport({ server: srv.url, insecureSkipTlsVerify: false, token }, { userAgent: 'x' });
    try {
      const before = srv.seen.length;
      const node = await thinApis(t).core.readNode({ name: 'n' });
      assert.equal(node.metadata?.name, 'n');
      assert.deepEqual(srv.seen.slice(before).map((s) => s.headers.authorization), ['Bearer old', 'Bearer new']);
      const basic = new HttpTransport({ server: srv.url, insecureSkipTlsVerify: false, basic: { username: 'admin', password: 'pw' } }, { userAgent: 'x' });
      await assert.rejects(thinApis(basic).core.readNode({ name: 'n' }), (e: unknown) => e instanceof KubeApiError && e.code === 401);
      assert.equal(srv.last().headers.authorization, `Basic ${Buffer.from('admin:pw').toString('base64')}`);
      basic.close();
    } finally {
      t.close();
      srv.answer = () => ({ status: 200, body: '{}' });
    }
  });

  it('cancels a request when the caller\'s signal aborts, closing its connection', async () => {
    const silent = new RecordingServer();
    silent.answer = () => undefined;
    await silent.start();
    const t = new HttpTransport({ server: silent.url, insecureSkipTlsVerify: false }, { userAgent: 'x' });
    try {
      const abort = new AbortController();
      const pending = requestSignal.run(abort.signal, () => thinApis(t).core.listNamespacedPod({ namespace: 'default' }));
      while (silent.seen.length === 0) await new Promise((r) => setTimeout(r, 20));
      assert.equal(silent.sockets.size, 1);
      abort.abort();
      await assert.rejects(pending, /GET \/api\/v1\/namespaces\/default\/pods: cancelled/);
      const deadline = Date.now() + 10_000;
      while (silent.sockets.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      assert.equal(silent.sockets.size, 0, 'the connection is closed');
      await assert.rejects(requestSignal.run(abort.signal, () => thinApis(t).core.readNode({ name: 'n' })), /cancelled/, 'an already aborted signal sends nothing');
      assert.equal(silent.seen.length, 1);
    } finally {
      t.close();
      await silent.stop();
    }
  });

  it('over HTTPS: checks the server against the kubeconfig\'s CA and presents the client certificate', async () => {
    const pki = path.join(dir, 'pki');
    const ssl = (...args: string[]): void => { execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' }); };
    execFileSync('mkdir', ['-p', pki]);
    ssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=test-ca', '-keyout', `${pki}/ca.key`, '-out', `${pki}/ca.crt`);
    for (const [name, ext] of [['server', 'subjectAltName=IP:127.0.0.1'], ['client', 'extendedKeyUsage=clientAuth']] as const) {
      ssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', `/CN=${name === 'client' ? 'system:node:n1' : '127.0.0.1'}`, '-keyout', `${pki}/${name}.key`, '-out', `${pki}/${name}.csr`);
      writeFileSync(`${pki}/${name}.ext`, `${ext}\n`);
      ssl('x509', '-req', '-in', `${pki}/${name}.csr`, '-CA', `${pki}/ca.crt`, '-CAkey', `${pki}/ca.key`, '-CAcreateserial', '-days', '1', '-extfile', `${pki}/${name}.ext`, '-out', `${pki}/${name}.crt`);
    }
    const read = (f: string): Buffer => readFileSync(path.join(pki, f));
    const secure = new RecordingServer();
    secure.answer = () => ({ status: 200, body: '{"metadata":{"name":"n1"}}' });
    await secure.start({ key: read('server.key'), cert: read('server.crt'), ca: read('ca.crt'), requestCert: true, rejectUnauthorized: true });
    const creds: KubeCredentials = { server: secure.url, ca: read('ca.crt'), cert: read('client.crt'), key: read('client.key'), insecureSkipTlsVerify: false };
    const ok = new HttpTransport(creds, { userAgent: 'x' });
    const unknownCa = new HttpTransport({ ...creds, ca: read('server.crt') }, { userAgent: 'x' });
    const skip = new HttpTransport({ ...creds, ca: undefined, insecureSkipTlsVerify: true }, { userAgent: 'x' });
    try {
      assert.equal((await thinApis(ok).core.readNode({ name: 'n1' })).metadata?.name, 'n1');
      assert.equal(secure.last().peer, 'system:node:n1', 'the server saw the client certificate');
      await assert.rejects(thinApis(unknownCa).core.readNode({ name: 'n1' }), /certificate/);
      assert.equal((await thinApis(skip).core.readNode({ name: 'n1' })).metadata?.name, 'n1', 'insecure-skip-tls-verify takes any server certificate');
    } finally {
      for (const t of [ok, unknownCa, skip]) t.close();
      await secure.stop();
    }
  });
});
