// The admission policies of deploy/components: they parse, name the ServiceAccount the DaemonSet runs as, cover every write the roles grant on the objects they guard, and decide the requests the driver and sidecars make (and a compromised node would) as intended.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { IDaemonSet } from 'kubernetes-models/apps/v1/DaemonSet';
import type { IValidatingAdmissionPolicy } from 'kubernetes-models/admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy';
import type { IValidatingAdmissionPolicyBinding } from 'kubernetes-models/admissionregistration.k8s.io/v1/ValidatingAdmissionPolicyBinding';
import { topologyKey } from '../../src/driver/context/config.js';
import { lostWithNodeAnnotation, PROVISIONER_FINALIZER } from '../../src/driver/cluster/node-loss/lost-nodes.js';
import { admit, celProgram, expressionsOf, type AdmissionRequest } from './admission-policy.js';
import { grants } from './rbac-grants.js';
import { kubectlMissing, renderBaseWith, validateObject, type K8sObject } from './render.js';

const skip = kubectlMissing();
const DRIVER = 'lode.csi.dev';
const KEY = topologyKey(DRIVER);
const LOST = lostWithNodeAnnotation(DRIVER);
const NODE_NAME_EXTRA = 'authentication.kubernetes.io/node-name';

let cache: Promise<K8sObject[]> | undefined;
const both = (): Promise<K8sObject[]> => (cache ??= renderBaseWith(['node-loss', 'node-bound-volumes']));

const policiesOf = (objects: K8sObject[]) => objects.filter((o) => o.kind === 'ValidatingAdmissionPolicy') as unknown as IValidatingAdmissionPolicy[];

/** The username the DaemonSet's pods authenticate as. */
function nodeUser(objects: K8sObject[]): string {
  const ds = objects.find((o) => o.kind === 'DaemonSet') as unknown as IDaemonSet;
  return `system:serviceaccount:${ds.metadata?.namespace ?? ''}:${ds.spec?.template.spec?.serviceAccountName ?? ''}`;
}

// --- Objects as the cluster holds them ---------------------------------------------------------

function pv(name: string, node: string, extra: { driver?: string; annotations?: Record<string, string>; finalizers?: string[]; capacity?: string; claim?: string } = {}): Record<string, unknown> {
  return {
    apiVersion: 'v1', kind: 'PersistentVolume',
    metadata: { name, uid: `uid-${name}`, ...(extra.annotations ? { annotations: extra.annotations } : {}), finalizers: extra.finalizers ?? ['kubernetes.io/pv-protection', PROVISIONER_FINALIZER] },
    spec: {
      capacity: { storage: extra.capacity ?? '1Gi' },
      csi: { driver: extra.driver ?? DRIVER, volumeHandle: `local/${name}` },
      nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: KEY, operator: 'In', values: [node] }] }] } },
      claimRef: { namespace: 'default', name: extra.claim ?? `data-${name}`, uid: `uid-claim-${name}` },
      persistentVolumeReclaimPolicy: 'Delete',
    },
  };
}

function claim(name: string, className: string | undefined, provisioner = DRIVER): Record<string, unknown> {
  return {
    apiVersion: 'v1', kind: 'PersistentVolumeClaim',
    metadata: { name, namespace: 'default', uid: `uid-${name}`, annotations: { 'volume.kubernetes.io/storage-provisioner': provisioner, 'volume.kubernetes.io/selected-node': 'node-1' } },
    spec: { ...(className !== undefined ? { storageClassName: className } : {}), accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
  };
}

function pod(name: string, node: string | undefined, volumes: unknown[]): Record<string, unknown> {
  return {
    apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default', uid: `uid-${name}` },
    spec: { ...(node !== undefined ? { nodeName: node } : {}), containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.9' }], volumes },
  };
}

const claimVolume = (claimName: string) => ({ name: 'data', persistentVolumeClaim: { claimName } });
const ephemeralVolume = (className: string) => ({ name: 'scratch', ephemeral: { volumeClaimTemplate: { spec: { storageClassName: className, accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } } } });

function withChange(o: Record<string, unknown>, change: (copy: Record<string, any>) => void): Record<string, unknown> {
  const copy = structuredClone(o) as Record<string, any>;
  change(copy);
  return copy;
}

const RESOURCES = { persistentvolumes: 'persistentvolumes', persistentvolumeclaims: 'persistentvolumeclaims', pods: 'pods' } as const;

/** A request of the nodes' ServiceAccount from the pod on `node` (undefined: a cluster that does not say). */
function request(user: string, node: string | undefined, operation: AdmissionRequest['operation'], resource: keyof typeof RESOURCES,
  object: Record<string, unknown> | null, oldObject: Record<string, unknown> | null, options: Record<string, unknown> | null = null): AdmissionRequest {
  return {
    operation, resource: { group: '', version: 'v1', resource: RESOURCES[resource] },
    userInfo: { username: user, extra: node !== undefined ? { [NODE_NAME_EXTRA]: [node], 'authentication.kubernetes.io/pod-name': [`lode-node-${node}`] } : {} },
    options, object, oldObject,
  };
}

/** The policies that refuse a request, by name. */
async function refusedBy(req: (user: string) => AdmissionRequest): Promise<string[]> {
  const objects = await both();
  return [...new Set(admit(objects, req(nodeUser(objects))).map((d) => d.policy))].sort();
}

// --- Structure ------------------------------------------------------------------------------

test('policies render, validate, parse as CEL, and each binding names a shipped policy and ConfigMap', { skip }, async () => {
  const objects = await both();
  const policies = policiesOf(objects);
  assert.deepEqual(policies.map((p) => p.metadata?.name).sort(), ['lode-node-claims', 'lode-node-own-volumes', 'lode-node-pods', 'lode-node-volumes']);
  for (const p of policies) {
    validateObject(p as unknown as K8sObject);
    assert.equal(p.spec?.failurePolicy, 'Fail', `${p.metadata?.name}: an expression that cannot be evaluated refuses`);
    for (const { where, expression } of expressionsOf(p)) assert.doesNotThrow(() => celProgram(expression), `${where} does not parse`);
  }
  const bindings = objects.filter((o) => o.kind === 'ValidatingAdmissionPolicyBinding') as unknown as IValidatingAdmissionPolicyBinding[];
  assert.deepEqual(bindings.map((b) => b.spec?.policyName).sort(), policies.map((p) => p.metadata?.name).sort(), 'each policy bound once');
  for (const b of bindings) {
    assert.deepEqual(b.spec?.validationActions, ['Deny'], `${b.metadata?.name} enforces`);
    const policy = policies.find((p) => p.metadata?.name === b.spec?.policyName)!;
    assert.equal(b.spec?.paramRef !== undefined, policy.spec?.paramKind !== undefined, `${b.metadata?.name}: params where the policy has a paramKind`);
    if (b.spec?.paramRef) {
      assert.equal(b.spec.paramRef.parameterNotFoundAction, 'Deny', 'no list, no deletes');
      assert.ok(objects.some((o) => o.kind === policy.spec?.paramKind?.kind && o.metadata.name === b.spec?.paramRef?.name && o.metadata.namespace === b.spec?.paramRef?.namespace),
        `${b.metadata?.name}: its ${policy.spec?.paramKind?.kind} is shipped`);
    }
  }
});

test('policies apply to the DaemonSet\'s ServiceAccount and to nobody else', { skip }, async () => {
  const objects = await both();
  const user = nodeUser(objects);
  for (const p of policiesOf(objects)) {
    const conditions = p.spec?.matchConditions ?? [];
    assert.equal(conditions.length, 1, `${p.metadata?.name}`);
    const ctx = (username: string) => ({ request: { userInfo: { username } } });
    assert.equal(celProgram(conditions[0]!.expression)(ctx(user)), true, `${p.metadata?.name} applies to ${user}`);
    for (const other of ['system:kube-controller-manager', 'system:serviceaccount:kube-system:persistent-volume-binder', `${user}x`]) {
      assert.equal(celProgram(conditions[0]!.expression)(ctx(other)), false, `${p.metadata?.name} leaves ${other} alone`);
    }
  }
  // Someone else deleting a foreign PV or any claim is not this policy's business.
  assert.deepEqual(admit(objects, request('system:kube-controller-manager', undefined, 'DELETE', 'persistentvolumes', null, pv('pv-x', 'node-2', { driver: 'other.csi' }))), []);
});

test('every write the roles grant on PVs, claims and pods goes through a policy', { skip }, async () => {
  const objects = await both();
  const policies = policiesOf(objects);
  const OPS: Record<string, 'CREATE' | 'UPDATE' | 'DELETE'> = { create: 'CREATE', update: 'UPDATE', patch: 'UPDATE', delete: 'DELETE' };
  for (const g of grants(objects)) {
    const m = /^\/(persistentvolumes|persistentvolumeclaims|pods)\/(create|update|patch|delete)(@ns)?/.exec(g);
    if (!m) continue;
    const covered = policies.some((p) => (p.spec?.matchConstraints?.resourceRules ?? []).some((r) => r.resources?.includes(m[1]!) && r.operations?.includes(OPS[m[2]!]!)));
    assert.ok(covered, `${g} is granted but no policy looks at it`);
  }
});

// --- Decisions ----------------------------------------------------------------------------------

test('PVs: a node creates and deletes its own, csi-resizer resizes any, and no node touches another driver\'s', { skip }, async () => {
  const mine = pv('pv-1', 'node-1');
  const theirs = pv('pv-2', 'node-2');
  // csi-provisioner on node-1: create, finalizer patch, delete after DeleteVolume.
  assert.deepEqual(await refusedBy((u) => request(u, 'node-1', 'CREATE', 'persistentvolumes', mine, null)), []);
  assert.deepEqual(await refusedBy((u) => request(u, 'node-1', 'UPDATE', 'persistentvolumes', withChange(mine, (c) => { c['metadata'].finalizers = ['kubernetes.io/pv-protection']; }), mine)), []);
  assert.deepEqual(await refusedBy((u) => request(u, 'node-1', 'DELETE', 'persistentvolumes', null, mine)), []);
  // csi-resizer, leader on node-1, grows node-2's volume.
  assert.deepEqual(await refusedBy((u) => request(u, 'node-1', 'UPDATE', 'persistentvolumes', withChange(theirs, (c) => { c['spec'].capacity.storage = '2Gi'; }), theirs)), []);
  // What a compromised node-1 might try.
  assert.deepEqual(await refusedBy((u) => request(u, 'node-1', 'CREATE', 'persistentvolumes', theirs, null)), ['lode-node-own-volumes']);
  assert.deepEqual(await refusedBy((u) => request(u, 'node-1', 'DELETE', 'persistentvolumes', null, theirs)), ['lode-node-own-volumes']);
  assert.deepEqual(await refusedBy((u) => request(u, 'node-1', 'UPDATE', 'persistentvolumes', withChange(theirs, (c) => { c['spec'].claimRef.name = 'stolen'; }), theirs)), ['lode-node-own-volumes']);
  assert.deepEqual(await refusedBy((u) => request(u, 'node-1', 'UPDATE', 'persistentvolumes', withChange(theirs, (c) => { c['spec'].nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].values = ['node-1']; }), theirs)), ['lode-node-own-volumes']);
  assert.deepEqual(await refusedBy((u) => request(u, 'node-1', 'UPDATE', 'persistentvolumes', withChange(mine, (c) => { c['spec'].nodeAffinity.required.nodeSelectorTerms.push({ matchExpressions: [{ key: KEY, operator: 'In', values: ['node-2'] }] }); }), mine)), ['lode-node-own-volumes']);
  const foreign = pv('pv-f', 'node-1', { driver: 'other.csi.example' });
  assert.deepEqual(await refusedBy((u) => request(u, 'node-1', 'DELETE', 'persistentvolumes', null, foreign)), ['lode-node-volumes']);
  assert.deepEqual(await refusedBy((u) => request(u, 'node-1', 'CREATE', 'persistentvolumes', foreign, null)), ['lode-node-volumes']);
  // A PV that pins nothing (a hand-made one) is no node's own.
  const unpinned = withChange(mine, (c) => { delete c['spec'].nodeAffinity; });
  assert.deepEqual(await refusedBy((u) => request(u, 'node-1', 'CREATE', 'persistentvolumes', unpinned, null)), ['lode-node-own-volumes']);
});

test('PVs: the node-loss leader marks and deletes a lost node\'s PV, only when the mark names the PV\'s node', { skip }, async () => {
  const theirs = pv('pv-2', 'node-2');
  // As NodeLossHandler.deleteVolume writes it: the mark added, the provisioner's finalizer dropped.
  const marked = withChange(theirs, (c) => {
    c['metadata'].annotations = { [LOST]: 'node-2: deleted' };
    c['metadata'].finalizers = (c['metadata'].finalizers as string[]).filter((f) => f !== PROVISIONER_FINALIZER);
  });
  assert.deepEqual(await refusedBy((u) => request(u, 'node-3', 'UPDATE', 'persistentvolumes', marked, theirs)), []);
  assert.deepEqual(await refusedBy((u) => request(u, 'node-3', 'DELETE', 'persistentvolumes', null, marked)), []);
  const wrongMark = withChange(marked, (c) => { c['metadata'].annotations[LOST] = 'node-9: deleted'; });
  assert.deepEqual(await refusedBy((u) => request(u, 'node-3', 'DELETE', 'persistentvolumes', null, wrongMark)), ['lode-node-own-volumes']);
});

test('PVs: without the node name in the token (before Kubernetes 1.30) the per-node policy refuses, saying why', { skip }, async () => {
  const objects = await both();
  const denials = admit(objects, request(nodeUser(objects), undefined, 'CREATE', 'persistentvolumes', pv('pv-1', 'node-1'), null));
  assert.ok(denials.length >= 1 && denials.every((d) => d.policy === 'lode-node-own-volumes'), JSON.stringify(denials));
  assert.ok(denials.some((d) => d.message.includes('1.30') && d.message.includes(NODE_NAME_EXTRA)), JSON.stringify(denials));
  // Without that component, node-loss alone still admits it.
  const lossOnly = await renderBaseWith(['node-loss']);
  assert.deepEqual(admit(lossOnly, request(nodeUser(lossOnly), undefined, 'CREATE', 'persistentvolumes', pv('pv-1', 'node-1'), null)), []);
});

test('claims: deleted only in an opted-in class, changed only when Lode provisioned them', { skip }, async () => {
  assert.deepEqual(await refusedBy((u) => request(u, 'node-3', 'DELETE', 'persistentvolumeclaims', null, claim('data-0', 'lode-local-rebuildable'), { preconditions: { uid: 'uid-data-0' } })), []);
  assert.deepEqual(await refusedBy((u) => request(u, 'node-3', 'DELETE', 'persistentvolumeclaims', null, claim('data-0', 'lode-local'))), ['lode-node-claims']);
  assert.deepEqual(await refusedBy((u) => request(u, 'node-3', 'DELETE', 'persistentvolumeclaims', null, claim('data-0', undefined))), ['lode-node-claims']);
  assert.deepEqual(await refusedBy((u) => request(u, 'node-3', 'DELETE', 'persistentvolumeclaims', null, claim('db', 'ceph-rbd', 'rbd.csi.ceph.com'))), ['lode-node-claims']);
  // csi-provisioner drops selected-node to reschedule (and sets a clone source's finalizer) on Lode's claims only.
  const mine = claim('data-1', 'lode-local');
  const rescheduled = withChange(mine, (c) => { delete c['metadata'].annotations['volume.kubernetes.io/selected-node']; });
  assert.deepEqual(await refusedBy((u) => request(u, 'node-1', 'UPDATE', 'persistentvolumeclaims', rescheduled, mine)), []);
  const other = claim('db', 'ceph-rbd', 'rbd.csi.ceph.com');
  assert.deepEqual(await refusedBy((u) => request(u, 'node-1', 'UPDATE', 'persistentvolumeclaims', withChange(other, (c) => { c['metadata'].finalizers = ['x']; }), other)), ['lode-node-claims']);
  // The message names the class, so an operator sees which list to extend.
  const objects = await both();
  const d = admit(objects, request(nodeUser(objects), 'node-3', 'DELETE', 'persistentvolumeclaims', null, claim('data-0', 'lode-local')));
  assert.match(d[0]?.message ?? '', /lode-node-loss.*'lode-local'/);
});

test('claims and pods: without the ConfigMap listing the classes, nothing is deleted', { skip }, async () => {
  const objects = (await both()).filter((o) => !(o.kind === 'ConfigMap' && o.metadata.name === 'lode-node-loss'));
  const user = nodeUser(objects);
  assert.deepEqual(admit(objects, request(user, 'node-3', 'DELETE', 'persistentvolumeclaims', null, claim('data-0', 'lode-local-rebuildable'))).map((d) => d.policy), ['lode-node-claims']);
  const p = pod('web-0', 'node-2', [claimVolume('data-web-0')]);
  assert.deepEqual(admit(objects, request(user, 'node-3', 'DELETE', 'pods', null, p, { gracePeriodSeconds: 0n, preconditions: { uid: 'uid-web-0' } })).map((d) => d.policy), ['lode-node-pods']);
});

test('pods: only the handler\'s force delete of a bound pod that uses a claim', { skip }, async () => {
  const force = (uid: string) => ({ gracePeriodSeconds: 0n, preconditions: { uid } });
  const p = pod('web-0', 'node-2', [claimVolume('data-web-0')]);
  // As NodeLossHandler.forceDeletePod sends it: grace 0, the listed uid as precondition.
  assert.deepEqual(await refusedBy((u) => request(u, 'node-3', 'DELETE', 'pods', null, p, force('uid-web-0'))), []);
  assert.deepEqual(await refusedBy((u) => request(u, 'node-3', 'DELETE', 'pods', null, pod('e-0', 'node-2', [ephemeralVolume('lode-local-rebuildable')]), force('uid-e-0'))), []);
  // Everything else.
  assert.deepEqual(await refusedBy((u) => request(u, 'node-3', 'DELETE', 'pods', null, p, { gracePeriodSeconds: 30n, preconditions: { uid: 'uid-web-0' } })), ['lode-node-pods']);
  assert.deepEqual(await refusedBy((u) => request(u, 'node-3', 'DELETE', 'pods', null, p, { gracePeriodSeconds: 0n })), ['lode-node-pods']);
  assert.deepEqual(await refusedBy((u) => request(u, 'node-3', 'DELETE', 'pods', null, p, force('uid-other'))), ['lode-node-pods']);
  assert.deepEqual(await refusedBy((u) => request(u, 'node-3', 'DELETE', 'pods', null, p, null)), ['lode-node-pods']);
  assert.deepEqual(await refusedBy((u) => request(u, 'node-3', 'DELETE', 'pods', null, pod('web-0', undefined, [claimVolume('data-web-0')]), force('uid-web-0'))), ['lode-node-pods']);
  assert.deepEqual(await refusedBy((u) => request(u, 'node-3', 'DELETE', 'pods', null, pod('api-0', 'node-2', [{ name: 'tmp', emptyDir: {} }]), force('uid-api-0'))), ['lode-node-pods']);
  assert.deepEqual(await refusedBy((u) => request(u, 'node-3', 'DELETE', 'pods', null, pod('e-0', 'node-2', [ephemeralVolume('lode-local')]), force('uid-e-0'))), ['lode-node-pods']);
  assert.deepEqual(await refusedBy((u) => request(u, 'node-3', 'UPDATE', 'pods', withChange(p, (c) => { c['metadata'].labels = { x: 'y' }; }), p)), ['lode-node-pods']);
  assert.deepEqual(await refusedBy((u) => request(u, 'node-3', 'CREATE', 'pods', p, null)), ['lode-node-pods']);
});
