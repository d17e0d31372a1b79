// Reading API credentials: a kubeconfig's current context (files, inline data, tokens), the pod's service account, refusals that name what is supported, and a rotated token read again.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { stringify } from 'yaml';
import { inClusterCredentials, kubeconfigCredentials } from '../../src/kube/kube-config.js';
import { BearerToken, TOKEN_REREAD_MS } from '../../src/kube/bearer-token.js';

let dir = '';
before(() => { dir = mkdtempSync(path.join(tmpdir(), 'lode-kubeconfig-')); });
after(() => rmSync(dir, { recursive: true, force: true }));

/** Writes a kubeconfig whose current context joins `cluster` and `user`. */
function kubeconfig(name: string, cluster: Record<string, unknown>, user: Record<string, unknown> | undefined, extra: Record<string, unknown> = {}): string {
  const file = path.join(dir, name);
  writeFileSync(file, stringify({
    apiVersion: 'v1', kind: 'Config',
    clusters: [{ name: 'other', cluster: { server: 'https://wrong:1' } }, { name: 'c', cluster }],
    users: [{ name: 'other', user: { token: 'wrong' } }, ...(user ? [{ name: 'u', user }] : [])],
    contexts: [{ name: 'other', context: { cluster: 'other', user: 'other' } }, { name: 'ctx', context: { cluster: 'c', ...(user ? { user: 'u' } : {}) } }],
    'current-context': 'ctx',
    ...extra,
  }));
  return file;
}

describe('kubeconfig credentials', () => {
  it('takes the current context\'s cluster and user: server, CA and client certificate from files relative to the kubeconfig or inline, a token', () => {
    mkdirSync(path.join(dir, 'pki'), { recursive: true });
    writeFileSync(path.join(dir, 'pki', 'ca.pem'), 'CA-PEM');
    const file = kubeconfig('files', { server: 'https://api.example:6443/', 'certificate-authority': 'pki/ca.pem', 'tls-server-name': 'kubernetes' },
      { 'client-certificate-data': Buffer.from('CERT-PEM').toString('base64'), 'client-key-data': Buffer.from('KEY-PEM').toString('base64'), token: 'tok-1' });
    const c = kubeconfigCredentials(file);
    assert.equal(c.server, 'https://api.example:6443');
    assert.equal(c.ca?.toString(), 'CA-PEM');
    assert.equal(c.tlsServerName, 'kubernetes');
    assert.equal(c.insecureSkipTlsVerify, false);
    assert.equal(c.cert?.toString(), 'CERT-PEM');
    assert.equal(c.key?.toString(), 'KEY-PEM');
    assert.equal(c.token?.value(), 'tok-1');
    assert.equal(c.basic, undefined);
  });

  it('reads a tokenFile (relative to the kubeconfig), basic auth, inline CA data, and a user-less context with TLS checks off', () => {
    writeFileSync(path.join(dir, 'token'), 'file-token\n');
    const withFile = kubeconfigCredentials(kubeconfig('tokenfile', { server: 'https://a:1', 'certificate-authority-data': Buffer.from('INLINE-CA').toString('base64') }, { tokenFile: 'token' }));
    assert.equal(withFile.token?.value(), 'file-token');
    assert.equal(withFile.ca?.toString(), 'INLINE-CA');
    const basic = kubeconfigCredentials(kubeconfig('basic', { server: 'https://a:1' }, { username: 'admin', password: 's3cret' }));
    assert.deepEqual(basic.basic, { username: 'admin', password: 's3cret' });
    const none = kubeconfigCredentials(kubeconfig('none', { server: 'http://127.0.0.1:8080', 'insecure-skip-tls-verify': true }, undefined));
    assert.equal(none.insecureSkipTlsVerify, true);
    assert.equal(none.token, undefined);
    assert.equal(none.cert, undefined);
  });

  it('refuses exec and auth-provider users, naming what is supported, and other bad input with the reason', () => {
    assert.throws(() => kubeconfigCredentials(kubeconfig('exec', { server: 'https://a:1' }, { exec: { command: 'aws', apiVersion: 'client.authentication.k8s.io/v1' } })),
      /user u authenticates with exec, which the driver does not run; supported: token, tokenFile, client-certificate.*docs\/api-access\.md/);
    assert.throws(() => kubeconfigCredentials(kubeconfig('ap', { server: 'https://a:1' }, { 'auth-provider': { name: 'gcp' } })), /authenticates with auth-provider/);
    assert.throws(() => kubeconfigCredentials(kubeconfig('nokey', { server: 'https://a:1' }, { 'client-certificate-data': 'Q0VSVA==' })), /certificate without its key/);
    assert.throws(() => kubeconfigCredentials(kubeconfig('noserver', {}, undefined)), /cluster c has no server/);
    assert.throws(() => kubeconfigCredentials(kubeconfig('badurl', { server: 'api:6443' }, undefined)), /not an http\(s\) URL|is not a URL/);
    assert.throws(() => kubeconfigCredentials(kubeconfig('nocontext', { server: 'https://a:1' }, undefined, { 'current-context': 'gone' })), /no context named gone/);
    assert.throws(() => kubeconfigCredentials(kubeconfig('nocafile', { server: 'https://a:1', 'certificate-authority': 'missing.pem' }, undefined)), /cannot read certificate-authority missing\.pem/);
    assert.throws(() => kubeconfigCredentials(kubeconfig('notokenfile', { server: 'https://a:1' }, { tokenFile: '/nonexistent/token' })), /cannot read the API token file \/nonexistent\/token/);
    const notYaml = path.join(dir, 'list');
    writeFileSync(notYaml, '- a\n- b\n');
    assert.throws(() => kubeconfigCredentials(notYaml), /not a mapping/);
  });
});

describe('in-cluster credentials', () => {
  it('take the address from the environment and the CA and token from the service account directory', () => {
    const sa = path.join(dir, 'sa');
    mkdirSync(sa, { recursive: true });
    writeFileSync(path.join(sa, 'ca.crt'), 'CLUSTER-CA');
    writeFileSync(path.join(sa, 'token'), 'sa-token');
    const c = inClusterCredentials({ KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' }, sa);
    assert.equal(c.server, 'https://10.96.0.1:443');
    assert.equal(c.ca?.toString(), 'CLUSTER-CA');
    assert.equal(c.token?.value(), 'sa-token');
    assert.equal(inClusterCredentials({ KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '443' }, sa).server, 'https://[fd00::1]:443');
    assert.throws(() => inClusterCredentials({}, sa), /KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set/);
    assert.throws(() => inClusterCredentials({ KUBERNETES_SERVICE_HOST: 'h', KUBERNETES_SERVICE_PORT: '1' }, path.join(dir, 'no-sa')), /cannot read the API token file/);
  });
});

describe('a token from a file', () => {
  it('is read again once a minute old, and at once after a rejection when the file changed', () => {
    const file = path.join(dir, 'rotating');
    writeFileSync(file, 'first');
    let now = 1_000_000;
    const t = BearerToken.fromFile(file, () => now);
    assert.equal(t.value(), 'first');
    writeFileSync(file, 'second');
    now += TOKEN_REREAD_MS - 1;
    assert.equal(t.value(), 'first', 'kept while fresh');
    now += 1;
    assert.equal(t.value(), 'second', 'read again once a minute old');
    writeFileSync(file, 'third');
    assert.equal(t.refreshAfterRejection(), true, 'a changed file is worth a retry');
    assert.equal(t.value(), 'third');
    assert.equal(t.refreshAfterRejection(), false, 'an unchanged one is not');
    assert.equal(BearerToken.fixed('x').refreshAfterRejection(), false);
    writeFileSync(file, '');
    now += TOKEN_REREAD_MS;
    assert.throws(() => t.value(), /is empty/);
  });
});
