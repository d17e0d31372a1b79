// The example overlays under deploy/examples render, validate, and keep the base's promises.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import * as path from 'node:path';
import type { IDaemonSet } from 'kubernetes-models/apps/v1/DaemonSet';
import type { IStorageClass } from 'kubernetes-models/storage.k8s.io/v1/StorageClass';
import { parsePoolSpec } from '../../src/pool/pool-spec.js';
import { parseListenAddress } from '../../src/metrics/listen-address.js';
import { renderSkip, renderKustomization, REPO_ROOT, validateObject, type K8sObject } from './render.js';
import { unknownFields } from './strict-fields.js';

const skip = renderSkip();
const EXAMPLES = path.join(REPO_ROOT, 'deploy', 'examples');

test('every example renders, validates and adds no central workload', { skip }, async () => {
  const dirs = readdirSync(EXAMPLES, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name);
  assert.ok(dirs.length >= 2, `examples: ${dirs.join(', ')}`);
  for (const dir of dirs) {
    const objects = await renderKustomization(path.join(EXAMPLES, dir));
    for (const o of objects) validateObject(o);
    const kinds = objects.map((o) => o.kind);
    for (const k of ['Deployment', 'StatefulSet', 'ReplicaSet', 'Service']) assert.ok(!kinds.includes(k), `${dir}: ${k}`);
    assert.equal(kinds.filter((k) => k === 'DaemonSet').length, 1, dir);
    for (const sc of objects.filter((o) => o.kind === 'StorageClass') as unknown as IStorageClass[]) {
      assert.equal(sc.volumeBindingMode, 'WaitForFirstConsumer', `${dir}: ${sc.metadata?.name}`);
      assert.equal(sc.allowVolumeExpansion, true, `${dir}: ${sc.metadata?.name}`);
    }
  }
});

for (const example of ['per-node-pools', 'quota-directories', 'lvm']) test(`${example}: node keys parse with the driver's parser and every class has a pool somewhere`, { skip }, async () => {
  const objects = await renderKustomization(path.join(EXAMPLES, example));
  const cm = objects.find((o) => o.kind === 'ConfigMap') as K8sObject;
  const data = cm['data'] as Record<string, string>;
  assert.deepEqual(Object.keys(data).sort(), ['default', 'worker-1', 'worker-2'], 'node keys merged into the base ConfigMap');
  const pools = new Set<string>();
  for (const [key, text] of Object.entries(data)) {
    for (const line of text.split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'))) {
      const p = parsePoolSpec(line);
      assert.ok(p.dir.startsWith('/var/lib/lode/'), `${key}: ${p.dir}`);
      // An unsized pool never takes its filesystem to 0 free: the records live there too.
      if (p.sizeBytes === undefined) assert.ok(p.reserve !== undefined, `${key}: pool ${p.name} has neither size= nor reserve=`);
      pools.add(p.name);
    }
  }
  for (const sc of objects.filter((o) => o.kind === 'StorageClass') as unknown as IStorageClass[]) {
    const pool = sc.parameters?.['pool'] ?? '';
    assert.ok(pools.has(pool), `${sc.metadata?.name}: pool "${pool}" is on no node`);
  }
});

test('prometheus: the metrics port declared, annotated and listened on agree', { skip }, async () => {
  const objects = await renderKustomization(path.join(EXAMPLES, 'prometheus'));
  const ds = objects.find((o) => o.kind === 'DaemonSet') as unknown as IDaemonSet;
  const lode = ds.spec?.template.spec?.containers.find((c) => c.name === 'lode');
  const address = lode?.env?.find((e) => e.name === 'LODE_METRICS_ADDRESS')?.value ?? '';
  const listen = parseListenAddress(address);
  assert.equal(listen.host, undefined, 'listens on the pod network');
  assert.equal(lode?.ports?.find((p) => p.name === 'metrics')?.containerPort, listen.port);
  assert.equal(ds.spec?.template.metadata?.annotations?.['prometheus.io/port'], String(listen.port));
  assert.equal(lode?.env?.filter((e) => e.name === 'LODE_METRICS_ADDRESS').length, 1, 'the patch replaced the variable');
});

test('the unknown-field check sees nested and metadata typos, and accepts maps', () => {
  const ds = {
    apiVersion: 'apps/v1', kind: 'DaemonSet',
    metadata: { name: 'x', labelz: {} },
    spec: {
      selector: { matchLabels: { any: 'thing' } },
      template: {
        metadata: { annotations: { 'free-form': 'yes' } },
        spec: { nodeSelector: { anything: 'goes' }, containers: [{ name: 'c', resources: { limits: { cpu: '1' } }, volumeMounts: [{ name: 'v', mountPath: '/', mountPropogation: 'None' }] }] },
      },
    },
  };
  assert.deepEqual(unknownFields(ds, 'apps/v1/DaemonSet'), [
    'metadata.labelz',
    'spec.template.spec.containers[0].volumeMounts[0].mountPropogation',
  ]);
});

test('pool-profiles: profile keys parse with the driver\'s parser, are valid ConfigMap keys, carry size= for the template capacity, and the ConfigMap keeps its name so running drivers see changes', { skip }, async () => {
  const objects = await renderKustomization(path.join(EXAMPLES, 'pool-profiles'));
  const cm = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name === 'lode-pools');
  assert.ok(cm, 'the ConfigMap is lode-pools exactly, no content hash');
  const ds = objects.find((o) => o.kind === 'DaemonSet') as unknown as IDaemonSet;
  assert.ok(ds.spec?.template.spec?.volumes?.some((v) => v.configMap?.name === 'lode-pools'), 'the DaemonSet mounts it by that name');
  const lode = ds.spec?.template.spec?.containers.find((c) => c.name === 'lode');
  assert.equal(lode?.env?.find((e) => e.name === 'LODE_PROFILE_LABEL')?.value, 'node.kubernetes.io/instance-type');
  const data = cm['data'] as Record<string, string>;
  const profiles = Object.keys(data).filter((k) => k.startsWith('profile.'));
  assert.deepEqual(profiles.sort(), ['profile.i4i.4xlarge', 'profile.m6id.2xlarge']);
  assert.ok('default' in data, 'other nodes keep the default');
  const pools = new Set<string>();
  for (const key of profiles) {
    assert.match(key, /^[-._a-zA-Z0-9]{1,253}$/);
    for (const line of data[key]!.split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'))) {
      const p = parsePoolSpec(line);
      assert.ok(p.dir.startsWith('/var/lib/lode/'), `${key}: ${p.dir}`);
      assert.ok(p.sizeBytes !== undefined, `${key}: pool ${p.name} has size=, so its template capacity is known`);
      pools.add(p.name);
    }
  }
  for (const sc of objects.filter((o) => o.kind === 'StorageClass') as unknown as IStorageClass[]) {
    const pool = sc.parameters?.['pool'] ?? '';
    if (pool !== 'local') assert.ok(pools.has(pool), `${sc.metadata?.name}: pool "${pool}" is in no profile`);
  }
});
