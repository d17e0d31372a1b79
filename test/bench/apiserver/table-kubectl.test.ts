// Real kubectl reading the tables: `kubectl get pods,pvc,pv,csistoragecapacities -A -o wide` against a fake API server serving toTable.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { toTable, type IncludeObject } from '../../../src/bench/apiserver/tables/table.js';
import { KUBECTL_BINARIES, kubectlFlags, kubectlSkip, runKubectl } from './kubectl-runner.js';

/**
 * kubectl on the machine (KUBECTL overrides), and a second one when KUBECTL_DEB names it: Debian
 * bookworm's kubernetes-client (1.20) unpacked with `apt-get download` and `dpkg-deb -x`, since
 * installing it would replace the machine's.
 */

const NOW = new Date('2026-01-01T00:10:00Z');
const CREATED = '2026-01-01T00:00:00Z';

const OBJECTS: Record<string, { kind: string; namespaced: boolean; items: Record<string, unknown>[] }> = {
  '/api/v1/pods': {
    kind: 'Pod', namespaced: true,
    items: [
      { metadata: { name: 'db-0', namespace: 'shop', creationTimestamp: CREATED }, spec: { nodeName: 'worker-a', containers: [{ name: 'pg' }] }, status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }], containerStatuses: [{ name: 'pg', ready: true, restartCount: 0, state: { running: {} } }] } },
      { metadata: { name: 'db-1', namespace: 'shop', creationTimestamp: CREATED, deletionTimestamp: CREATED }, spec: { containers: [{ name: 'pg' }] }, status: { phase: 'Pending' } },
    ],
  },
  '/api/v1/persistentvolumeclaims': {
    kind: 'PersistentVolumeClaim', namespaced: true,
    items: [{ metadata: { name: 'data-db-0', namespace: 'shop', creationTimestamp: CREATED }, spec: { volumeName: 'pvc-1', storageClassName: 'lode-local', volumeMode: 'Filesystem' }, status: { phase: 'Lost', capacity: { storage: '1024Mi' }, accessModes: ['ReadWriteOnce'] } }],
  },
  '/api/v1/persistentvolumes': {
    kind: 'PersistentVolume', namespaced: false,
    items: [{ metadata: { name: 'pvc-1', creationTimestamp: CREATED }, spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], persistentVolumeReclaimPolicy: 'Delete', storageClassName: 'lode-local', claimRef: { namespace: 'shop', name: 'data-db-0' } }, status: { phase: 'Bound' } }],
  },
  '/apis/storage.k8s.io/v1/csistoragecapacities': {
    kind: 'CSIStorageCapacity', namespaced: true,
    items: [{ metadata: { name: 'csisc-abc', namespace: 'kube-system', creationTimestamp: CREATED }, storageClassName: 'lode-local', capacity: '163840Ki' }],
  },
};

const resource = (name: string, kind: string, namespaced: boolean, shortNames: string[] = []): Record<string, unknown> =>
  ({ name, singularName: kind.toLowerCase(), namespaced, kind, verbs: ['get', 'list', 'watch'], shortNames });

/** A fake API server: legacy discovery and Table lists, the least kubectl needs for `get`. */
function fakeApiServer(): Promise<Server> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const send = (code: number, body: unknown): void => { res.writeHead(code, { 'content-type': 'application/json' }); res.end(JSON.stringify(body)); };
    switch (url.pathname) {
      case '/version': return send(200, { major: '1', minor: '32', gitVersion: 'v1.32.0' });
      case '/api': return send(200, { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [] });
      case '/apis': return send(200, { kind: 'APIGroupList', apiVersion: 'v1', groups: [{ name: 'storage.k8s.io', versions: [{ groupVersion: 'storage.k8s.io/v1', version: 'v1' }], preferredVersion: { groupVersion: 'storage.k8s.io/v1', version: 'v1' } }] });
      case '/api/v1': return send(200, { kind: 'APIResourceList', groupVersion: 'v1', resources: [resource('pods', 'Pod', true, ['po']), resource('persistentvolumeclaims', 'PersistentVolumeClaim', true, ['pvc']), resource('persistentvolumes', 'PersistentVolume', false, ['pv'])] });
      case '/apis/storage.k8s.io/v1': return send(200, { kind: 'APIResourceList', groupVersion: 'storage.k8s.io/v1', resources: [resource('csistoragecapacities', 'CSIStorageCapacity', true)] });
    }
    const list = OBJECTS[url.pathname];
    if (list === undefined || !(req.headers.accept ?? '').includes('as=Table')) return send(404, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404 });
    const includeObject = (url.searchParams.get('includeObject') ?? 'Metadata') as IncludeObject;
    return send(200, toTable(list.kind, list.items, { now: NOW, includeObject, resourceVersion: '10' }));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

const dir = mkdtempSync(join(tmpdir(), 'lode-tables-kubectl-'));
after(() => rmSync(dir, { recursive: true, force: true }));

for (const bin of KUBECTL_BINARIES.length > 0 ? KUBECTL_BINARIES : ['kubectl']) {
  test(`${bin}: get -A -o wide shows the server's columns, wide ones included, and each namespace from the row metadata`, { skip: kubectlSkip() ?? false }, async () => {
    const server = await fakeApiServer();
    try {
      const port = (server.address() as AddressInfo).port;
      const out = await runKubectl(bin, [...kubectlFlags(dir, port), 'get', 'pods,pvc,pv,csistoragecapacities', '-A', '-o', 'wide']);
      const lines = out.split('\n').map((l) => l.trim().split(/\s{2,}/));
      const header = (first: string): string[] => lines.find((l) => l[0] === 'NAMESPACE' && l[1] === 'NAME' && l[2] === first) ?? lines.find((l) => l[0] === 'NAME' && l[1] === first) ?? [];
      const rowOf = (name: string): string[] => lines.find((l) => l.some((cell) => cell.endsWith(name))) ?? [];
      assert.deepEqual(header('READY'), ['NAMESPACE', 'NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE', 'IP', 'NODE', 'NOMINATED NODE', 'READINESS GATES']);
      assert.deepEqual(rowOf('pod/db-0'), ['shop', 'pod/db-0', '1/1', 'Running', '0', '10m', '<none>', 'worker-a', '<none>', '<none>']);
      assert.equal(rowOf('pod/db-1')[3], 'Terminating');
      assert.deepEqual(header('STATUS'), ['NAMESPACE', 'NAME', 'STATUS', 'VOLUME', 'CAPACITY', 'ACCESS MODES', 'STORAGECLASS', 'VOLUMEATTRIBUTESCLASS', 'AGE', 'VOLUMEMODE']);
      assert.deepEqual(rowOf('persistentvolumeclaim/data-db-0'), ['shop', 'persistentvolumeclaim/data-db-0', 'Lost', 'pvc-1', '1Gi', 'RWO', 'lode-local', '<unset>', '10m', 'Filesystem']);
      // PVs are cluster-scoped: kubectl leaves their NAMESPACE cell empty, and the empty REASON leaves a wide gap.
      assert.deepEqual(rowOf('persistentvolume/pvc-1'), ['persistentvolume/pvc-1', '1Gi', 'RWO', 'Delete', 'Bound', 'shop/data-db-0', 'lode-local', '<unset>', '10m', '<unset>']);
      // Kinds outside the core group are named kind.group/name when several kinds are listed.
      assert.deepEqual(rowOf('/csisc-abc'), ['kube-system', 'csistoragecapacity.storage.k8s.io/csisc-abc', 'lode-local', '160Mi']);
    } finally {
      server.close();
    }
  });
}
