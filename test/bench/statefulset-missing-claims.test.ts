// The StatefulSet controller recreates a Pending pod's claim that someone else removed, as upstream's createMissingPersistentVolumeClaims does.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { checkInlineObjects, UnmodelledFields } from '../../src/bench/manifests/load-manifests.js';
import { runScenario } from '../../src/bench/scenario/scenario-runner.js';
import type { Cluster } from '../../src/bench/cluster/cluster.js';
import { eventsOf } from './run-helpers.js';

const u = new UnmodelledFields();
const objects = checkInlineObjects([
  { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } },
  { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'local' }, provisioner: 'lode.csi.dev', volumeBindingMode: 'WaitForFirstConsumer' },
  {
    apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'db' },
    spec: {
      replicas: 1, serviceName: 'db', selector: { matchLabels: { app: 'db' } },
      template: {
        metadata: { labels: { app: 'db' } },
        // No node matches: the pod stays Pending, holding its claim.
        spec: { nodeSelector: { disk: 'none-such' }, containers: [{ name: 'db', image: 'registry.k8s.io/pause:3.9' }] },
      },
      volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'local', resources: { requests: { storage: '16Mi' } } } }],
    },
  },
], 'objects', u);

describe('StatefulSet claims', () => {
  it('a Pending pod whose claim was removed gets a new claim of the same name', async () => {
    const root = mkdtempSync('/tmp/lode-bench-test-');
    let cluster: Cluster | undefined;
    const uids: string[] = [];
    try {
      const result = await runScenario({
        name: 'sts-missing-claims', description: '', file: 'statefulset-missing-claims.test.ts', seed: 1, capacityPollMs: 60_000, provisioning: 'distributed',
        steps: [
          { op: 'apply', objects, label: 'objects' },
          { op: 'advance', ms: 10_000 },
          // Deleted, and its pvc-protection finalizer taken off by hand (as a force-delete tool would): gone while its pod waits.
          { op: 'delete', kind: 'PersistentVolumeClaim', name: 'data-db-0', namespace: 'default' },
          { op: 'patch', kind: 'PersistentVolumeClaim', name: 'data-db-0', namespace: 'default', merge: { metadata: { finalizers: null } } },
          { op: 'advance', ms: 6 * 60_000 },
        ],
      }, {
        workDir: join(root, 'run'),
        onCluster: (c) => {
          cluster = c;
          c.store.watch('PersistentVolumeClaim', (e) => { if (e.type === 'ADDED') uids.push(e.object.metadata?.uid ?? ''); });
        },
      });
      assert.deepEqual(result.controllerErrors, []);
      assert.equal(uids.length, 2, 'created again');
      assert.notEqual(uids[0], uids[1]);
      assert.equal(cluster!.store.get('PersistentVolumeClaim', 'data-db-0', 'default')?.metadata?.uid, uids[1]);
      assert.equal(eventsOf(result, 'SuccessfulCreate').filter((e) => e.message.startsWith('create Claim data-db-0')).length, 2);
      assert.equal(result.pods.find((p) => p.name === 'default/db-0')?.phase, 'Pending');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
