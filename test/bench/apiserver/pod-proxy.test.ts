// The pod proxy's paths as the API server reads them, and the driver's DaemonSet Pod the bench shows (its ports from the deploy files, which the proxy and kubectl lode rely on).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parsePodProxyPath } from '../../../src/bench/apiserver/pod-proxy.js';
import { driverPod, driverPorts } from '../../../src/bench/nodes/driver-pod.js';

describe('pods/proxy paths', () => {
  it('NAME:PORT, an encoded colon, scheme:NAME:PORT, no port, no path', () => {
    assert.deepEqual(parsePodProxyPath('/api/v1/namespaces/lode-system/pods/lode-node-n1:9809/proxy/metrics'), { namespace: 'lode-system', pod: 'lode-node-n1', port: '9809', path: '/metrics' });
    assert.deepEqual(parsePodProxyPath('/api/v1/namespaces/lode-system/pods/lode-node-n1%3A9809/proxy/metrics'), { namespace: 'lode-system', pod: 'lode-node-n1', port: '9809', path: '/metrics' });
    assert.deepEqual(parsePodProxyPath('/api/v1/namespaces/a/pods/http:p:80/proxy/x/y'), { namespace: 'a', pod: 'p', port: '80', path: '/x/y' });
    assert.deepEqual(parsePodProxyPath('/api/v1/namespaces/a/pods/p/proxy'), { namespace: 'a', pod: 'p', port: '', path: '/' });
  });

  it('leaves every other path to the resource handlers', () => {
    for (const p of ['/api/v1/namespaces/a/pods/p', '/api/v1/namespaces/a/pods/p/status', '/api/v1/namespaces/a/services/s:80/proxy/x', '/api/v1/pods/p/proxy/x', '/api/v1/namespaces/a/pods/p/proxyx']) {
      assert.equal(parsePodProxyPath(p), undefined, p);
    }
  });
});

describe('the driver\'s DaemonSet Pod in the bench', () => {
  it('the base DaemonSet\'s ports and the monitoring component\'s metrics port, the template\'s labels, owned by the DaemonSet', () => {
    assert.deepEqual(driverPorts().map((p) => [p.name, p.containerPort]), [['healthz', 9808], ['metrics', 9809]]);
    const pod = driverPod('node-1', 'uid-1');
    assert.equal(pod.metadata?.name, 'lode-node-node-1');
    assert.equal(pod.metadata?.namespace, 'lode-system');
    assert.deepEqual(pod.metadata?.labels, { 'app.kubernetes.io/name': 'lode', 'app.kubernetes.io/component': 'node' });
    assert.deepEqual(pod.metadata?.ownerReferences?.map((r) => [r.kind, r.name, r.uid, r.controller]), [['DaemonSet', 'lode-node', 'uid-1', true]]);
    assert.equal(pod.spec?.nodeName, 'node-1');
  });
});
