// RBAC by feature: the API catalogue is complete against src/, deploy/base grants the default features' requests and the node-loss component the handler's, nothing more either way.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type { IDaemonSet } from 'kubernetes-models/apps/v1/DaemonSet';
import type { IRoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/RoleBinding';
import type { IStorageClass } from 'kubernetes-models/storage.k8s.io/v1/StorageClass';
import { FEATURE_INSTALL, PERMISSIONS, permissionsAt, type ApiFeature, type Verb } from '../../src/driver/cluster/api-permissions.js';
import { parseDriverFlags } from '../../src/cli/driver-flags.js';
import { onNodeLoss } from '../../src/driver/request/parameters.js';
import { grantKey, grants, permissionGrants } from './rbac-grants.js';
import { kubectlMissing, renderBaseWith, renderKustomization, REPO_ROOT, validateObject, type K8sObject } from './render.js';

const skip = kubectlMissing();
const BASE = path.join(REPO_ROOT, 'deploy', 'base');
const SRC = path.join(REPO_ROOT, 'src');

let baseCache: Promise<K8sObject[]> | undefined;
let lossCache: Promise<K8sObject[]> | undefined;
const base = (): Promise<K8sObject[]> => (baseCache ??= renderKustomization(BASE));
const withNodeLoss = (): Promise<K8sObject[]> => (lossCache ??= renderBaseWith(['node-loss']));

const key = (o: K8sObject): string => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;

function lodeEnv(objects: K8sObject[], name: string): string | undefined {
  const ds = objects.find((o) => o.kind === 'DaemonSet') as unknown as IDaemonSet;
  return ds.spec?.template.spec?.containers.find((c) => c.name === 'lode')?.env?.find((e) => e.name === name)?.value;
}

// --- The catalogue against the code ---------------------------------------------------------

/** Every .ts file under a directory. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => path.join(e.parentPath, e.name));
}

/** The client's API objects (KubeApis in src/kube/kube-client.ts) and the API group each serves. */
const API_GROUPS: Record<string, string> = { core: '', storage: 'storage.k8s.io', coordination: 'coordination.k8s.io' };

const METHOD_VERBS: Record<string, Verb | 'deletecollection'> = {
  read: 'get', list: 'list', watch: 'watch', create: 'create', replace: 'update', patch: 'patch', delete: 'delete', deleteCollection: 'deletecollection',
};

/** "listNamespacedCSIStorageCapacity" -> list of csistoragecapacities, as the generated client names its methods. */
function requestOf(method: string): { verb: string; resource: string } {
  const m = /^(read|list|watch|create|replace|patch|deleteCollection|delete)(?:Namespaced)?([A-Z]\w*?)(Status)?(ForAllNamespaces)?$/.exec(method);
  assert.ok(m, `cannot tell the request of client method ${method}`);
  const kind = m[2]!.toLowerCase();
  const plural = kind.endsWith('s') ? `${kind}es` : kind.endsWith('y') ? `${kind.slice(0, -1)}ies` : `${kind}s`;
  return { verb: METHOD_VERBS[m[1]!]!, resource: m[3] ? `${plural}/status` : plural };
}

/** The driver's modules that make API requests, and the features they make them for. */
const MODULE_FEATURES: Record<string, ApiFeature[]> = {
  'kube/kube-client.ts': ['api-access'],
  'kube/leader-election.ts': ['node-loss', 'template-capacity'],
  'kube/node-events.ts': ['orphans', 'limit-reports', 'pool-profiles'],
  'kube/provisioner-classes.ts': ['claim-reasons', 'template-capacity'],
  'driver/cluster/node-loss/': ['node-loss'],
  'driver/cluster/claim-reasons/': ['claim-reasons'],
  'driver/cluster/reservations/': ['pod-reservations'],
  'driver/cluster/orphans/': ['orphans'],
  'driver/cluster/profiles/': ['pool-profiles'],
  'driver/cluster/template-capacity/': ['template-capacity'],
};

/** Where a shared module's features reach it from: a module beside each listed feature's entry imports it. */
const FEATURE_ENTRIES: Partial<Record<ApiFeature, string>> = {
  'node-loss': 'driver/cluster/node-loss/node-loss.ts',
  'claim-reasons': 'driver/cluster/claim-reasons/claim-reasons.ts',
  orphans: 'driver/cluster/orphans/orphan-check.ts',
  'limit-reports': 'driver/cluster/limit-reports.ts',
  'pool-profiles': 'driver/cluster/profiles/profile-reload.ts',
  'template-capacity': 'driver/cluster/template-capacity/template-capacity.ts',
};

interface Call { file: string; group: string; verb: string; resource: string }

/**
 * Code that talks to the API with other credentials than the driver's service account: the
 * bench (its own re-enacted cluster) and the kubectl plugin (the user's kubeconfig).
 */
function notTheDriversAccount(rel: string): boolean {
  return rel.startsWith('bench/') || rel.startsWith('plugin/');
}

/** Every API request the driver's code makes: calls of the client's API objects, outside the bench and the plugin. */
function apiCalls(): Call[] {
  const out: Call[] = [];
  for (const file of sources(SRC)) {
    const rel = path.relative(SRC, file);
    if (notTheDriversAccount(rel) || rel.startsWith('gen/')) continue;
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/\.(core|storage|coordination)\.(\w+)\(/g)) {
      out.push({ file: rel, group: API_GROUPS[m[1]!]!, ...requestOf(m[2]!) });
    }
  }
  return out;
}

function featuresOf(file: string): ApiFeature[] {
  const hit = Object.entries(MODULE_FEATURES).find(([prefix]) => file === prefix || (prefix.endsWith('/') && file.startsWith(prefix)));
  assert.ok(hit, `${file} makes API requests but is not in MODULE_FEATURES: say which feature it serves, and list its requests in api-permissions.ts`);
  return hit[1];
}

test('the client has exactly the API objects the scan knows, and no code outside the bench and the plugin loads client-node (types only), so every request goes through the thin APIs the scan reads', () => {
  const text = readFileSync(path.join(SRC, 'kube', 'thin-apis.ts'), 'utf8');
  const apis = /export interface KubeApis \{([^}]*)\}/.exec(text)?.[1] ?? '';
  assert.deepEqual([...apis.matchAll(/^\s*(\w+):/gm)].map((m) => m[1]).sort(), Object.keys(API_GROUPS).sort());
  const loaders = sources(SRC).map((f) => path.relative(SRC, f))
    .filter((rel) => !notTheDriversAccount(rel) && /import\((['"])@kubernetes\/client-node\1\)|^import (?!type)[^;]*from '@kubernetes\/client-node'/m.test(readFileSync(path.join(SRC, rel), 'utf8')));
  assert.deepEqual(loaders, [], 'API requests go through KubeClient\'s thin APIs only, so the scan below sees them all');
});

test('the scan reads client method names as the API server names the requests', () => {
  assert.deepEqual(requestOf('listNamespacedCSIStorageCapacity'), { verb: 'list', resource: 'csistoragecapacities' });
  assert.deepEqual(requestOf('replacePersistentVolume'), { verb: 'update', resource: 'persistentvolumes' });
  assert.deepEqual(requestOf('readStorageClass'), { verb: 'get', resource: 'storageclasses' });
  assert.deepEqual(requestOf('watchNamespacedLease'), { verb: 'watch', resource: 'leases' });
  assert.deepEqual(requestOf('patchNamespacedPersistentVolumeClaimStatus'), { verb: 'patch', resource: 'persistentvolumeclaims/status' });
  assert.deepEqual(requestOf('deleteCollectionNamespacedPod'), { verb: 'deletecollection', resource: 'pods' });
});

test('api-permissions.ts lists every request the code makes, under the feature that makes it, and nothing the code does not make', () => {
  const calls = apiCalls();
  assert.ok(calls.length >= 20, `only ${calls.length} API calls found: the scan is broken`);
  const made = new Set<string>();
  for (const c of calls) for (const f of featuresOf(c.file)) made.add(`${f} ${c.group}/${c.resource}/${c.verb}`);
  const listed = new Set(PERMISSIONS.flatMap((p) => p.verbs.map((v) => `${p.feature} ${p.group}/${p.resource}/${v}`)));
  assert.deepEqual([...made].filter((m) => !listed.has(m)).sort(), [], 'requests the code makes that api-permissions.ts does not list');
  assert.deepEqual([...listed].filter((l) => !made.has(l)).sort(), [], 'permissions api-permissions.ts lists that no code of the feature uses');
  for (const [feature, entry] of Object.entries(FEATURE_ENTRIES)) {
    const shared = Object.entries(MODULE_FEATURES).filter(([m, fs]) => m.startsWith('kube/') && fs.includes(feature as ApiFeature)).map(([m]) => path.basename(m, '.ts'));
    const dir = path.dirname(path.join(SRC, entry));
    const texts = readdirSync(dir).filter((f) => f.endsWith('.ts')).map((f) => readFileSync(path.join(dir, f), 'utf8'));
    for (const s of shared) {
      const from = new RegExp(`from '[./]*(?:kube/)?${s}\\.js'`);
      assert.ok(texts.some((t) => from.test(t)), `a module beside ${entry} (${feature}) imports ${s}`);
    }
  }
});

test('every feature is installed somewhere, and only node-loss and the claim reasons its leader writes outside deploy/base', () => {
  const features = new Set(PERMISSIONS.map((p) => p.feature));
  assert.deepEqual([...features].sort(), Object.keys(FEATURE_INSTALL).sort());
  assert.deepEqual(Object.entries(FEATURE_INSTALL).filter(([, place]) => place !== 'base').map(([f]) => f), ['node-loss', 'claim-reasons']);
});

// --- deploy/base ------------------------------------------------------------------------------

const WRITES = ['create', 'update', 'patch', 'delete', 'deletecollection'];

test('deploy/base: no role deletes pods or claims, no role writes pods, and node-loss is off', { skip }, async () => {
  const objects = await base();
  const granted = [...grants(objects)];
  for (const g of granted) {
    assert.ok(!/^\/(pods|persistentvolumeclaims)\/(delete|deletecollection)/.test(g), `deploy/base grants ${g}`);
    for (const w of WRITES) assert.ok(!g.startsWith(`/pods/${w}`), `deploy/base grants ${g}`);
  }
  assert.ok(!objects.some((o) => o.metadata.name.includes('node-loss')), 'no node-loss object in deploy/base');
  assert.equal(lodeEnv(objects, 'LODE_NODE_LOSS'), 'off');
  assert.equal(lodeEnv(objects, 'LODE_IN_CLUSTER'), 'true', 'the default features keep their API access');
});

test('the driver reads the DaemonSet\'s LODE_NODE_LOSS as meant: off without the component, on with it', { skip }, async () => {
  const pools = mkdtempSync(path.join(tmpdir(), 'lode-flags-'));
  try {
    const parse = async (objects: K8sObject[]) => {
      const env = { LODE_IN_CLUSTER: lodeEnv(objects, 'LODE_IN_CLUSTER'), LODE_NODE_LOSS: lodeEnv(objects, 'LODE_NODE_LOSS'), POD_NAMESPACE: 'lode-system' };
      const flags = await parseDriverFlags(['--endpoint', 'unix:///tmp/lode-flags.sock', '--node-id', 'node-1', '--pool', `p=${pools}`], env, 'test');
      assert.notEqual(flags, 'help');
      return flags === 'help' ? undefined : flags.config;
    };
    const offConfig = await parse(await base());
    assert.ok(offConfig?.kube !== undefined, 'API access on');
    assert.equal(offConfig.nodeLoss, undefined, 'deploy/base: no node-loss handler');
    assert.equal((await parse(await withNodeLoss()))?.nodeLoss?.mode, 'on', 'with the component: the handler acts');
  } finally {
    rmSync(pools, { recursive: true, force: true });
  }
});

// --- deploy/components/node-loss --------------------------------------------------------------

test('node-loss component: renders and validates, adds only its own objects, and changes nothing of base but the switch', { skip }, async () => {
  const [plain, overlay] = [await base(), await withNodeLoss()];
  for (const o of overlay) validateObject(o);
  const baseKeys = new Set(plain.map(key));
  const added = overlay.filter((o) => !baseKeys.has(key(o))).map(key).sort();
  assert.deepEqual(added, [
    'ClusterRole//lode-node-loss', 'ClusterRoleBinding//lode-node-loss', 'ConfigMap/lode-system/lode-node-loss',
    'Role/lode-system/lode-node-loss', 'RoleBinding/lode-system/lode-node-loss', 'StorageClass//lode-local-rebuildable',
    'ValidatingAdmissionPolicy//lode-node-claims', 'ValidatingAdmissionPolicy//lode-node-pods', 'ValidatingAdmissionPolicy//lode-node-volumes',
    'ValidatingAdmissionPolicyBinding//lode-node-claims', 'ValidatingAdmissionPolicyBinding//lode-node-pods', 'ValidatingAdmissionPolicyBinding//lode-node-volumes',
  ]);
  assert.equal(overlay.length - added.length, plain.length, 'every base object is still there');
  for (const o of plain) {
    const same = overlay.find((x) => key(x) === key(o));
    if (o.kind === 'DaemonSet') continue;
    assert.deepEqual(same, o, `${key(o)} unchanged`);
  }
  assert.equal(lodeEnv(overlay, 'LODE_NODE_LOSS'), 'on');
  // The DaemonSet without the switch (kustomize's merge may move it within env).
  const strip = (objs: K8sObject[]): IDaemonSet => {
    const ds = structuredClone(objs.find((o) => o.kind === 'DaemonSet')) as unknown as IDaemonSet;
    for (const c of ds.spec?.template.spec?.containers ?? []) if (c.env) c.env = c.env.filter((e) => e.name !== 'LODE_NODE_LOSS');
    return ds;
  };
  assert.ok(isDeepStrictEqual(strip(overlay), strip(plain)), 'the DaemonSet differs in the switch only');
});

test('node-loss component: its roles grant exactly the handler\'s requests, bound to the DaemonSet\'s ServiceAccount', { skip }, async () => {
  const objects = await withNodeLoss();
  const own = objects.filter((o) => (o.kind === 'ClusterRole' || o.kind === 'Role') && o.metadata.name === 'lode-node-loss');
  assert.equal(own.length, 2);
  assert.deepEqual([...grants(own)].sort(), [...permissionGrants(permissionsAt('components/node-loss'))].sort());
  const ds = objects.find((o) => o.kind === 'DaemonSet') as unknown as IDaemonSet;
  for (const role of own) {
    const b = objects.find((o) => o.kind === `${role.kind}Binding` && (o as unknown as IRoleBinding).roleRef.name === role.metadata.name) as unknown as IRoleBinding | undefined;
    assert.ok(b, `${role.kind} ${role.metadata.name} is bound`);
    assert.equal(b.roleRef.kind, role.kind);
    assert.deepEqual(b.subjects, [{ kind: 'ServiceAccount', name: ds.spec?.template.spec?.serviceAccountName, namespace: ds.metadata?.namespace }]);
  }
});

test('base + node-loss: the driver\'s roles together grant every request of the catalogue and nothing else', { skip }, async () => {
  const objects = await withNodeLoss();
  const driverRoles = objects.filter((o) => (o.kind === 'ClusterRole' || o.kind === 'Role') && ['lode-driver', 'lode-node-loss'].includes(o.metadata.name));
  const granted = grants(driverRoles);
  const needed = permissionGrants(PERMISSIONS);
  assert.deepEqual([...needed].filter((n) => !granted.has(n)).sort(), [], 'used but not granted');
  assert.deepEqual([...granted].filter((g) => !needed.has(g)).sort(), [], 'granted but not used');
  // The deletes of pods and claims come from the component alone.
  assert.ok(granted.has(grantKey('', 'pods', 'delete', false)) && granted.has(grantKey('', 'persistentvolumeclaims', 'delete', false)));
});

test('node-loss component: the classes that opt in are the ones the admission policy lets the handler release', { skip }, async () => {
  const objects = await withNodeLoss();
  const optedIn = (objects.filter((o) => o.kind === 'StorageClass') as unknown as IStorageClass[])
    .filter((sc) => sc.provisioner === 'lode.csi.dev' && onNodeLoss(sc.parameters) === 'delete-claims').map((sc) => sc.metadata?.name).sort();
  assert.ok(optedIn.length >= 1, 'the component ships a class that opts in');
  const cm = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name === 'lode-node-loss');
  assert.ok(cm);
  const data = cm['data'] as Record<string, string>;
  assert.deepEqual(Object.keys(data).filter((k) => data[k] === 'delete-claims').sort(), optedIn);
  assert.deepEqual(Object.values(data).filter((v) => v !== 'delete-claims'), [], 'no entry means anything else');
});
