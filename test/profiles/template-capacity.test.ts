// Template capacity: the figures a fresh node of each profile offers (the driver's own GetCapacity on an empty pool), and a real driver's leader publishing, updating and deleting the objects through the bench's API server, never touching csi-provisioner's.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { V1CSIStorageCapacity, V1Lease } from '@kubernetes/client-node';
import { ApiCluster, until } from '../helpers/api-cluster.js';
import { DriverHarness } from '../helpers/driver-harness.js';
import { MiB, TOPOLOGY_KEY } from '../driver/support.js';
import { labelSelectorMatches } from '../../src/bench/api/selectors.js';
import { parsePoolSpec } from '../../src/pool/pool-spec.js';
import { parseQuantity } from '../../src/util/quantity.js';
import { CAPACITY_DRIVER_LABEL, CAPACITY_MANAGED_BY_LABEL, TEMPLATE_MANAGED_BY, TEMPLATE_NODE_LABEL, templateObjectName, templateObjects, type ClassInfo } from '../../src/driver/cluster/template-capacity/template-objects.js';
import { templateCapacityLeaseName } from '../../src/driver/cluster/template-capacity/template-capacity.js';

const LABEL = 'node.kubernetes.io/instance-type';
const GiB = 1024 * MiB;

describe('template capacity figures', () => {
  const profiles = new Map([
    ['m-small', [parsePoolSpec('fast=/p/fast,size=64Mi'), parsePoolSpec('bulk=/p/bulk')]],
    ['m-large', [parsePoolSpec('fast=/p/fast,size=10Gi,max-volume-size=2Gi')]],
    ['m-tiny', [parsePoolSpec('fast=/p/fast,size=1Mi')]],
  ]);
  const classes: ClassInfo[] = [
    { name: 'lode-fast', parameters: { pool: 'fast', 'csi.storage.k8s.io/fstype': 'xfs' } },
    { name: 'lode-bulk', parameters: { pool: 'bulk' } },
    { name: 'lode-default', parameters: {} },
  ];

  it('offer a sized pool\'s size, its largest volume in allocation units, nothing where the smallest volume does not fit, and skip what cannot be known', () => {
    const { objects, skipped } = templateObjects(profiles, LABEL, classes);
    const by = (p: string, c: string) => objects.find((o) => o.profile === p && o.storageClass === c);
    assert.deepEqual(by('m-small', 'lode-default'), {
      name: templateObjectName('m-small', 'lode-default'), profile: 'm-small', storageClass: 'lode-default',
      matchLabels: { [TEMPLATE_NODE_LABEL]: 'true', [LABEL]: 'm-small' }, capacityBytes: 64 * MiB, maximumVolumeBytes: 64 * MiB,
    }, 'no pool named: the profile\'s first pool, as CreateVolume picks; ext4 fits in 64 MiB');
    assert.equal(by('m-small', 'lode-fast')?.capacityBytes, 64 * MiB);
    assert.equal(by('m-small', 'lode-fast')?.maximumVolumeBytes, 0, 'the class formats xfs, whose smallest filesystem is larger than 64 MiB: no volume fits');
    assert.equal(by('m-large', 'lode-fast')?.maximumVolumeBytes, 2 * GiB, 'max-volume-size caps the largest volume');
    assert.equal(by('m-large', 'lode-fast')?.capacityBytes, 10 * GiB);
    assert.equal(by('m-tiny', 'lode-default')?.maximumVolumeBytes, 0, 'ext4 needs more than 1 MiB: no volume fits');
    assert.equal(by('m-large', 'lode-bulk'), undefined, 'a profile without the pool gets no object');
    assert.equal(by('m-small', 'lode-bulk'), undefined);
    assert.deepEqual(skipped.map((s) => `${s.profile}/${s.storageClass}`), ['m-small/lode-bulk'], 'an unsized pool depends on a disk not there yet');
    assert.match(skipped[0]!.why, /no size=/);
    assert.notEqual(templateObjectName('a', 'b'), templateObjectName('a', 'c'));
    assert.match(templateObjectName('m-small', 'lode-fast'), /^[a-z0-9-]{1,63}$/);
  });
});

const needsRoot = process.getuid?.() !== 0 ? 'needs root (loop devices)' : false;
const api = new ApiCluster({ dirPrefix: 'lode-template-' });
const NS = 'lode-system';

describe('a real driver\'s leader publishes template capacity', { skip: needsRoot }, () => {
  let h: DriverHarness;
  let config = '';
  let host = '';
  const mine = () => (api.store.list('CSIStorageCapacity', NS) as V1CSIStorageCapacity[]).filter((c) => c.metadata?.labels?.[CAPACITY_MANAGED_BY_LABEL] === TEMPLATE_MANAGED_BY);
  const named = (p: string, c: string) => mine().find((o) => o.metadata?.name === templateObjectName(p, c));

  before(async () => {
    await api.start();
    const { store } = api;
    store.create('Node', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-t', labels: { [LABEL]: 'm-small', [TOPOLOGY_KEY]: 'node-t', 'kubernetes.io/hostname': 'node-t' } } });
    const sc = (name: string, pool: string, mode: string) => store.create('StorageClass', { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name }, provisioner: 'lode.csi.dev', volumeBindingMode: mode, parameters: { pool } });
    sc('lode-fast', 'fast', 'WaitForFirstConsumer');
    sc('lode-now', 'fast', 'Immediate');
    // csi-provisioner's own object for the real node: never Lode's leader's to change.
    store.create('CSIStorageCapacity', {
      apiVersion: 'storage.k8s.io/v1', kind: 'CSIStorageCapacity',
      metadata: { name: 'csisc-node-t', namespace: NS, labels: { [CAPACITY_DRIVER_LABEL]: 'lode.csi.dev', [CAPACITY_MANAGED_BY_LABEL]: 'external-provisioner-node-t' } },
      storageClassName: 'lode-fast', nodeTopology: { matchLabels: { [TOPOLOGY_KEY]: 'node-t' } }, capacity: '10Mi', maximumVolumeSize: '10Mi',
    });
    config = path.join(api.dir, 'pools');
    host = path.join(api.dir, 'host');
    await fs.mkdir(config);
    await fs.mkdir(host);
    await fs.writeFile(path.join(config, 'profile.m-small'), `fast=${host}/pools/fast,size=64Mi\n`);
    await fs.writeFile(path.join(config, 'profile.m-large'), `fast=${host}/pools/fast,size=1Gi,max-volume-size=256Mi\n`);
    h = await DriverHarness.start({
      nodeId: 'node-t', pools: [],
      extraArgs: ['--pool-config', config, '--pool-root', host, '--kubeconfig', api.kubeconfig, '--namespace', NS,
        '--leader-lease-duration', '3', '--leader-renew-deadline', '2', '--leader-retry-period', '0.5', '--template-capacity-period', '0.5', '--node-loss', 'off'],
    });
  });

  after(async () => {
    await h?.cleanup();
    await api.stop();
  });

  it('one object per profile and first-consumer class, with what GetCapacity answers on an empty pool of the profile, owned by the Lease', async () => {
    await until('two template objects', () => mine().length === 2);
    const small = named('m-small', 'lode-fast');
    const large = named('m-large', 'lode-fast');
    assert.ok(small && large, 'one per profile for lode-fast; none for the Immediate class');
    // This node runs profile m-small on an empty pool: its own GetCapacity is what a fresh node offers.
    const answer = await h.client.getCapacity({ parameters: { pool: 'fast' }, volume_capabilities: [] });
    assert.equal(parseQuantity(small.capacity ?? ''), Number(answer.available_capacity));
    assert.equal(parseQuantity(small.maximumVolumeSize ?? ''), Number(answer.maximum_volume_size?.value));
    assert.equal(parseQuantity(large.capacity ?? ''), 1024 * MiB);
    assert.equal(parseQuantity(large.maximumVolumeSize ?? ''), 256 * MiB);
    assert.deepEqual(small.nodeTopology?.matchLabels, { [TEMPLATE_NODE_LABEL]: 'true', [LABEL]: 'm-small' });
    assert.equal(small.metadata?.labels?.[CAPACITY_DRIVER_LABEL], 'lode.csi.dev');
    const lease = api.store.get('Lease', templateCapacityLeaseName('lode.csi.dev'), NS) as V1Lease | undefined;
    assert.equal(lease?.spec?.holderIdentity, 'node-t');
    assert.deepEqual(small.metadata?.ownerReferences?.map((o) => [o.kind, o.name, o.uid]), [['Lease', 'lode-csi-dev-template-capacity', lease?.metadata?.uid]]);
    // The scheduler's matching (a selector on the node's labels): the real node matches only
    // csi-provisioner's object; a template node made from it (its labels copied, the template
    // label added, the name changed) matches the template object of its profile too.
    const real = api.store.get('Node', 'node-t')?.metadata?.labels ?? {};
    const template = { ...real, 'kubernetes.io/hostname': 'template-node-for-m-small-1', [TEMPLATE_NODE_LABEL]: 'true' };
    assert.equal(labelSelectorMatches(small.nodeTopology, real), false, 'a real node never matches a template object');
    assert.equal(labelSelectorMatches(small.nodeTopology, template), true);
    assert.equal(labelSelectorMatches(large.nodeTopology, template), false, 'nor the template of another profile');
  });

  it('follows the profiles: a changed size updates, a profile gone deletes, csi-provisioner\'s object stays as it was', async () => {
    const before = api.store.get('CSIStorageCapacity', 'csisc-node-t', NS) as V1CSIStorageCapacity;
    await fs.writeFile(path.join(config, 'profile.m-large'), `fast=${host}/pools/fast,size=2Gi\n`);
    await until('m-large updated', () => parseQuantity(named('m-large', 'lode-fast')?.maximumVolumeSize ?? '0') === 2 * GiB);
    await fs.rm(path.join(config, 'profile.m-large'));
    await until('m-large deleted', () => named('m-large', 'lode-fast') === undefined);
    assert.ok(named('m-small', 'lode-fast'), 'the other profile\'s object stays');
    api.store.delete('StorageClass', 'lode-fast');
    await until('no class, no objects', () => mine().length === 0);
    assert.deepEqual(api.store.get('CSIStorageCapacity', 'csisc-node-t', NS), before, 'csi-provisioner\'s object untouched');
  });
});
