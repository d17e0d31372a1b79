// The claim reasons from the published objects alone: which claims wait, when a pool is on no node, when a size is below its filesystem's minimum, and when neither may be said.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { V1CSIStorageCapacity, V1PersistentVolume, V1PersistentVolumeClaim, V1StorageClass } from '@kubernetes/client-node';
import { claimReasons, waitingClaims, type ClaimReasonInputs } from '../../src/driver/cluster/claim-reasons/claim-reasons.js';
import { claimEventName } from '../../src/driver/cluster/claim-reasons/claim-reason-events.js';

const DRIVER = 'lode.csi.dev';
const KEY = `topology.${DRIVER}/node`;
const Mi = 2 ** 20;

function sc(name: string, parameters: Record<string, string>, provisioner = DRIVER): V1StorageClass {
  return { metadata: { name }, provisioner, parameters };
}

function claim(name: string, className: string, size: string, extra: { phase?: string; volumeName?: string; annotations?: Record<string, string>; block?: boolean } = {}): V1PersistentVolumeClaim {
  return {
    metadata: { name, namespace: 'default', uid: `uid-${name}`, ...(extra.annotations ? { annotations: extra.annotations } : {}) },
    spec: { storageClassName: className, resources: { requests: { storage: size } }, ...(extra.volumeName ? { volumeName: extra.volumeName } : {}), ...(extra.block ? { volumeMode: 'Block' } : {}) },
    status: { phase: extra.phase ?? 'Pending' },
  };
}

function cap(node: string, className: string, free: number, largest: number | undefined): V1CSIStorageCapacity {
  return {
    metadata: { name: `csisc-${node}-${className}`, namespace: 'lode-system' },
    storageClassName: className, nodeTopology: { matchLabels: { [KEY]: node } },
    capacity: String(free), ...(largest !== undefined ? { maximumVolumeSize: String(largest) } : {}),
  };
}

function pv(node: string, pool: string): V1PersistentVolume {
  return {
    metadata: { name: `pv-${node}-${pool}` },
    spec: {
      csi: { driver: DRIVER, volumeHandle: 'h', volumeAttributes: { pool } },
      nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: KEY, operator: 'In', values: [node] }] }] } },
    },
  };
}

const CLASSES = [sc('lode-local', { pool: 'local' }), sc('lode-local-xfs', { pool: 'local', fsType: 'xfs' }), sc('lode-nowhere', { pool: 'nowhere' }), sc('lode-default', {})];

function inputs(claims: V1PersistentVolumeClaim[], capacities: V1CSIStorageCapacity[], more: Partial<ClaimReasonInputs> = {}): ClaimReasonInputs {
  return { driverName: DRIVER, topologyKey: KEY, waiting: waitingClaims(claims, CLASSES, DRIVER), capacities, classes: CLASSES, pvs: [], ownNode: 'node-9', ownPools: ['other'], ...more };
}

/** Two nodes with pool "local" of 160Mi free, as csi-provisioner publishes it for each class: xfs's largest is 0 (it takes 300Mi). */
const SMALL_POOLS = ['node-1', 'node-2'].flatMap((n) => [cap(n, 'lode-local', 160 * Mi, 160 * Mi), cap(n, 'lode-local-xfs', 160 * Mi, 0), cap(n, 'lode-nowhere', 0, 0), cap(n, 'lode-default', 160 * Mi, 160 * Mi)]);

describe('waiting claims', () => {
  it('only Pending, unbound, unselected claims of the driver\'s classes, not being deleted', () => {
    const deleting = claim('deleting', 'lode-local', '1Gi');
    deleting.metadata!.deletionTimestamp = new Date();
    const claims = [
      claim('waits', 'lode-local', '1Gi'),
      claim('bound', 'lode-local', '1Gi', { phase: 'Bound', volumeName: 'pv-1' }),
      claim('binding', 'lode-local', '1Gi', { volumeName: 'pv-2' }),
      claim('selected', 'lode-local', '1Gi', { annotations: { 'volume.kubernetes.io/selected-node': 'node-1' } }),
      claim('other-driver', 'foreign', '1Gi'),
      claim('no-class', 'missing-class', '1Gi'),
      deleting,
    ];
    const classes = [...CLASSES, sc('foreign', { pool: 'local' }, 'other.csi.dev')];
    assert.deepEqual(waitingClaims(claims, classes, DRIVER).map((w) => w.claim.metadata?.name), ['waits']);
  });
});

describe('claim reasons', () => {
  it('a class naming a pool no node offers: PoolNotOnAnyNode, naming the pool, the class and the nodes that answered', () => {
    const r = claimReasons(inputs([claim('nowhere-data', 'lode-nowhere', '16Mi')], SMALL_POOLS));
    assert.deepEqual(r.map((x) => x.reason), ['PoolNotOnAnyNode']);
    assert.equal(r[0]?.message, 'no node has pool "nowhere", which class lode-nowhere names: the lode.csi.dev drivers of 2 node(s) (node-1, node-2) report no space for it, as a node without that pool does; a node\'s pools are its driver\'s --pool settings');
  });

  it('the pool is somewhere after all: another class of it offering space, a PV of it, or the looking node\'s own pools', () => {
    const c = [claim('nowhere-data', 'lode-nowhere', '16Mi')];
    const classes = [...CLASSES, sc('lode-nowhere-xfs', { pool: 'nowhere', fsType: 'xfs' })];
    assert.deepEqual(claimReasons({ ...inputs(c, [...SMALL_POOLS, cap('node-3', 'lode-nowhere-xfs', 5 * Mi, 0)]), classes }), [], 'node-3 has 5Mi of it free');
    assert.deepEqual(claimReasons(inputs(c, SMALL_POOLS, { pvs: [pv('node-2', 'nowhere')] })), [], 'node-2 holds a volume of it: full, not missing');
    assert.deepEqual(claimReasons(inputs(c, SMALL_POOLS, { ownPools: ['nowhere'] })), [], 'the leader has it');
    const foreign = pv('node-2', 'nowhere');
    foreign.spec!.csi!.driver = 'other.csi.dev';
    assert.equal(claimReasons(inputs(c, SMALL_POOLS, { pvs: [foreign] })).length, 1, 'another driver\'s PV proves nothing');
  });

  it('nothing said before any node has published capacity for the class, nor for a class that names no pool', () => {
    assert.deepEqual(claimReasons(inputs([claim('nowhere-data', 'lode-nowhere', '16Mi')], SMALL_POOLS.filter((c) => c.storageClassName !== 'lode-nowhere'))), []);
    const empty = ['node-1'].map((n) => cap(n, 'lode-default', 0, 0));
    assert.deepEqual(claimReasons(inputs([claim('d', 'lode-default', '16Mi')], empty)), [], 'each driver picks its own first pool: no pool is missing');
  });

  it('an xfs claim below xfs\'s minimum where the free space would hold it but not 300Mi: BelowFilesystemMinimum, naming both sizes and the nodes', () => {
    const r = claimReasons(inputs([claim('small-xfs', 'lode-local-xfs', '64Mi')], SMALL_POOLS));
    assert.deepEqual(r.map((x) => x.reason), ['BelowFilesystemMinimum']);
    assert.equal(r[0]?.message, 'xfs volumes take at least 300Mi and this claim asks 64Mi: node-1 (160Mi free), node-2 (160Mi free) would hold what it asks in pool "local" of class lode-local-xfs, but none has room for 300Mi, so the scheduler finds no node with enough free storage');
  });

  it('not said when some node fits, when the claim asks the minimum or more, or when no node has even what it asks', () => {
    const small = claim('small-xfs', 'lode-local-xfs', '64Mi');
    assert.deepEqual(claimReasons(inputs([small], [...SMALL_POOLS, cap('node-3', 'lode-local-xfs', 400 * Mi, 400 * Mi)])), [], 'node-3 can make it (300Mi)');
    assert.deepEqual(claimReasons(inputs([claim('big-xfs', 'lode-local-xfs', '300Mi')], SMALL_POOLS)), [], 'asks the minimum: plain lack of space');
    assert.deepEqual(claimReasons(inputs([small], ['node-1', 'node-2'].map((n) => cap(n, 'lode-local-xfs', 32 * Mi, 0)))), [], '32Mi free: not even what it asks');
    assert.deepEqual(claimReasons(inputs([small], ['node-1'].map((n) => cap(n, 'lode-local-xfs', 160 * Mi, undefined)))), [], 'no largest published: the scheduler goes by the free space, which fits');
  });

  it('a raw block claim takes the block minimum (16Mi), not its class\'s filesystem\'s', () => {
    const r = claimReasons(inputs([claim('raw', 'lode-local-xfs', '8Mi', { block: true })], ['node-1'].map((n) => cap(n, 'lode-local-xfs', 12 * Mi, 0))));
    assert.equal(r[0]?.reason, 'BelowFilesystemMinimum');
    assert.match(r[0]?.message ?? '', /^raw block volumes take at least 16Mi and this claim asks 8Mi: node-1 \(12Mi free\)/);
    assert.deepEqual(claimReasons(inputs([claim('raw', 'lode-local-xfs', '64Mi', { block: true })], SMALL_POOLS)), [], '64Mi raw fits where 160Mi are free');
  });

  it('a message names five nodes at most', () => {
    const nodes = Array.from({ length: 8 }, (_, k) => `n${k}`);
    const r = claimReasons(inputs([claim('nowhere-data', 'lode-nowhere', '16Mi')], nodes.map((n) => cap(n, 'lode-nowhere', 0, 0))));
    assert.match(r[0]?.message ?? '', /of 8 node\(s\) \(n0, n1, n2, n3, n4 and 3 more\)/);
  });
});

describe('event names', () => {
  it('follow from claim, uid and reason, so another leader writes the same one; a valid name however long the claim\'s', () => {
    const a = claimEventName('data', 'u1', 'PoolNotOnAnyNode');
    assert.match(a, /^data\.[0-9a-f]{16}$/);
    assert.equal(claimEventName('data', 'u1', 'PoolNotOnAnyNode'), a);
    assert.notEqual(claimEventName('data', 'u2', 'PoolNotOnAnyNode'), a, 'a new claim of the same name gets its own Event');
    assert.notEqual(claimEventName('data', 'u1', 'BelowFilesystemMinimum'), a);
    assert.equal(claimEventName('x'.repeat(253), 'u1', 'PoolNotOnAnyNode').length, 253);
  });
});
