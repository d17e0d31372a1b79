// URL paths to group/version/resource/namespace/name/subresource, label and field selectors, and Accept negotiation, as the API server parses them.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseRequestPath, verbOf } from '../../../src/bench/apiserver/request-info.js';
import { parseLabelSelector, SelectorSyntaxError } from '../../../src/bench/apiserver/label-selector.js';
import { labelsMatch } from '../../../src/bench/api/selectors.js';
import { fieldsMatch, parseFieldSelector, UnsupportedFieldError } from '../../../src/bench/apiserver/field-selector.js';
import { negotiate, parseAccept } from '../../../src/bench/apiserver/accept.js';
import { clientOf, parseApiAddress } from '../../../src/bench/apiserver/server.js';

describe('request paths', () => {
  it('splits core and named-group paths', () => {
    assert.deepEqual(parseRequestPath('/api/v1/namespaces/ns1/pods/p1/status'), { type: 'resource', group: '', version: 'v1', plural: 'pods', namespace: 'ns1', name: 'p1', subresource: 'status' });
    assert.deepEqual(parseRequestPath('/apis/storage.k8s.io/v1/storageclasses'), { type: 'resource', group: 'storage.k8s.io', version: 'v1', plural: 'storageclasses', namespace: undefined, name: undefined, subresource: undefined });
    assert.deepEqual(parseRequestPath('/api/v1/pods'), { type: 'resource', group: '', version: 'v1', plural: 'pods', namespace: undefined, name: undefined, subresource: undefined });
  });

  it('tells a namespace\'s own subresource from a list in the namespace', () => {
    const status = parseRequestPath('/api/v1/namespaces/team/status');
    assert.equal(status.type === 'resource' && status.plural, 'namespaces');
    assert.equal(status.type === 'resource' && status.name, 'team');
    assert.equal(status.type === 'resource' && status.subresource, 'status');
    const list = parseRequestPath('/api/v1/namespaces/team/configmaps');
    assert.equal(list.type === 'resource' && list.namespace, 'team');
    assert.equal(list.type === 'resource' && list.plural, 'configmaps');
    const ns = parseRequestPath('/api/v1/namespaces/team');
    assert.equal(ns.type === 'resource' && ns.name, 'team');
    assert.equal(ns.type === 'resource' && ns.namespace, undefined);
  });

  it('names discovery documents', () => {
    assert.deepEqual(parseRequestPath('/api'), { type: 'legacy-versions' });
    assert.deepEqual(parseRequestPath('/apis'), { type: 'groups' });
    assert.deepEqual(parseRequestPath('/apis/coordination.k8s.io'), { type: 'group', group: 'coordination.k8s.io' });
    assert.deepEqual(parseRequestPath('/apis/coordination.k8s.io/v1'), { type: 'group-version', group: 'coordination.k8s.io', version: 'v1' });
    assert.deepEqual(parseRequestPath('/api/v1'), { type: 'group-version', group: '', version: 'v1' });
    assert.equal(parseRequestPath('/api/v1/a/b/c/d').type, 'unknown');
  });

  it('names verbs as the authorizer does', () => {
    const p = parseRequestPath('/api/v1/pods');
    assert.ok(p.type === 'resource');
    assert.equal(verbOf('GET', p, false), 'list');
    assert.equal(verbOf('GET', p, true), 'watch');
    assert.equal(verbOf('DELETE', p, false), 'deletecollection');
    assert.equal(verbOf('GET', { ...p, name: 'x' }, false), 'get');
  });
});

describe('label selectors', () => {
  const labels = { app: 'db', tier: 'backend', n: '5' };
  const match = (s: string): boolean => labelsMatch(parseLabelSelector(s), labels);

  it('matches equality and set-based requirements', () => {
    assert.equal(match(''), true);
    assert.equal(match('app=db'), true);
    assert.equal(match('app==db,tier=backend'), true);
    assert.equal(match('app!=db'), false);
    assert.equal(match('app in (web, db)'), true);
    assert.equal(match('app notin (db)'), false);
    assert.equal(match('tier'), true);
    assert.equal(match('!tier'), false);
    assert.equal(match('!missing'), true);
    assert.equal(match('missing notin (x)'), true, 'notin holds for a missing key');
    assert.equal(match('missing!=x'), true, '!= holds for a missing key');
    assert.equal(match('n>4,n<6'), true);
    assert.equal(match('n>5'), false);
  });

  it('refuses malformed selectors', () => {
    assert.throws(() => parseLabelSelector('app in db'), SelectorSyntaxError);
    assert.throws(() => parseLabelSelector('app in (db'), SelectorSyntaxError);
    assert.throws(() => parseLabelSelector('n>x'), SelectorSyntaxError);
    assert.throws(() => parseLabelSelector('a=b c=d'), SelectorSyntaxError);
  });
});

describe('field selectors', () => {
  const pod = { metadata: { name: 'p', namespace: 'ns' }, spec: { nodeName: 'n1' }, status: { phase: 'Running' } };

  it('matches the fields pods support', () => {
    assert.equal(fieldsMatch('Pod', parseFieldSelector('Pod', 'spec.nodeName=n1,status.phase=Running'), pod), true);
    assert.equal(fieldsMatch('Pod', parseFieldSelector('Pod', 'status.phase!=Running'), pod), false);
    assert.equal(fieldsMatch('Pod', parseFieldSelector('Pod', 'metadata.name==p,metadata.namespace=ns'), pod), true);
    assert.equal(fieldsMatch('Pod', parseFieldSelector('Pod', 'spec.nodeName='), { metadata: { name: 'q' } }), true, 'an empty value selects unscheduled pods');
  });

  it('matches what kubectl describe asks of events', () => {
    const ev = { metadata: { name: 'e' }, involvedObject: { name: 'p', namespace: 'ns', uid: 'u1', kind: 'Pod' } };
    assert.equal(fieldsMatch('Event', parseFieldSelector('Event', 'involvedObject.name=p,involvedObject.namespace=ns,involvedObject.uid=u1'), ev), true);
    assert.equal(fieldsMatch('Event', parseFieldSelector('Event', 'involvedObject.uid=u2'), ev), false);
  });

  it('refuses a field the kind does not index, as upstream does', () => {
    assert.throws(() => parseFieldSelector('Pod', 'spec.containers=x'), UnsupportedFieldError);
    assert.throws(() => parseFieldSelector('PersistentVolumeClaim', 'spec.nodeName=n1'), UnsupportedFieldError);
    assert.throws(() => parseFieldSelector('Pod', 'nonsense'), SelectorSyntaxError);
  });
});

describe('Accept negotiation', () => {
  const kubectlTable = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';
  const kubectlDiscovery = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json';

  it('gives a Table only where one is offered', () => {
    assert.equal(negotiate(parseAccept(kubectlTable), { table: true }), 'table');
    assert.equal(negotiate(parseAccept(kubectlTable), {}), 'object');
  });

  it('gives aggregated discovery v2 first, then v2beta1, then the legacy form', () => {
    assert.equal(negotiate(parseAccept(kubectlDiscovery), { discovery: true }), 'discovery-v2');
    assert.equal(negotiate(parseAccept('application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList'), { discovery: true }), 'discovery-v2beta1');
    assert.equal(negotiate(parseAccept('application/json, */*'), { discovery: true }), 'object');
  });

  it('answers JSON to a protobuf-first Accept, and nothing to protobuf only', () => {
    assert.equal(negotiate(parseAccept('application/vnd.kubernetes.protobuf,application/json'), {}), 'object');
    assert.equal(negotiate(parseAccept('application/vnd.kubernetes.protobuf'), {}), undefined);
  });
});

describe('--api address and client names', () => {
  it('takes loopback addresses only', () => {
    assert.deepEqual(parseApiAddress('127.0.0.1:0'), { host: '127.0.0.1', port: 0 });
    assert.deepEqual(parseApiAddress('[::1]:6443'), { host: '::1', port: 6443 });
    assert.deepEqual(parseApiAddress('localhost:8080'), { host: '127.0.0.1', port: 8080 });
    assert.throws(() => parseApiAddress('0.0.0.0:6443'), /loopback only/);
    assert.throws(() => parseApiAddress('192.168.1.5:6443'), /loopback only/);
    assert.throws(() => parseApiAddress('6443'), /HOST:PORT/);
  });

  it('names the client by the User-Agent\'s first token', () => {
    assert.equal(clientOf('kubectl/v1.32.4 (linux/amd64) kubernetes/abc'), 'kubectl');
    assert.equal(clientOf('node-fetch'), 'node-fetch');
    assert.equal(clientOf(undefined), 'unknown');
  });
});
