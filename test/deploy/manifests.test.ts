// Renders deploy/base with `kubectl kustomize`, validates every object, and asserts what a node-local CSI install must hold.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import type { IDaemonSet } from 'kubernetes-models/apps/v1/DaemonSet';
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { IProbe } from 'kubernetes-models/v1/Probe';
import type { ICSIDriver } from 'kubernetes-models/storage.k8s.io/v1/CSIDriver';
import type { IStorageClass } from 'kubernetes-models/storage.k8s.io/v1/StorageClass';
import type { IClusterRole } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRole';
import type { IRole } from 'kubernetes-models/rbac.authorization.k8s.io/v1/Role';
import type { IRoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/RoleBinding';
import type { IResourceQuota } from 'kubernetes-models/v1/ResourceQuota';
import { permissionsAt } from '../../src/driver/cluster/api-permissions.js';
import { parseListenAddress } from '../../src/metrics/listen-address.js';
import { parseBytes } from '../../src/util/quantity.js';
import { renderSkip, parseObjects, renderKustomization, REPO_ROOT, validateObject, type K8sObject } from './render.js';
import { grants, permissionGrants } from './rbac-grants.js';

const BASE = path.join(REPO_ROOT, 'deploy', 'base');
const DRIVER = 'lode.csi.dev';
const KUBELET = '/var/lib/kubelet';
const skip = renderSkip();

let cache: Promise<K8sObject[]> | undefined;
const rendered = (): Promise<K8sObject[]> => (cache ??= renderKustomization(BASE));

function only<T>(objects: K8sObject[], kind: string): T {
  const found = objects.filter((o) => o.kind === kind);
  assert.equal(found.length, 1, `expected exactly one ${kind}, found ${found.length}`);
  return found[0] as unknown as T;
}

function all<T>(objects: K8sObject[], kind: string): T[] {
  return objects.filter((o) => o.kind === kind) as unknown as T[];
}

async function daemonSet(): Promise<IDaemonSet> {
  return only<IDaemonSet>(await rendered(), 'DaemonSet');
}

function container(ds: IDaemonSet, name: string): IContainer {
  const c = ds.spec?.template.spec?.containers.find((x) => x.name === name);
  assert.ok(c, `container ${name} missing from the DaemonSet`);
  return c;
}

function envValue(c: IContainer, name: string): string | undefined {
  return c.env?.find((e) => e.name === name)?.value;
}

function envField(c: IContainer, name: string): string | undefined {
  return c.env?.find((e) => e.name === name)?.valueFrom?.fieldRef?.fieldPath;
}

/** The value of "--flag=value" in args, or true for a bare "--flag", or undefined. */
function flag(c: IContainer, name: string): string | true | undefined {
  for (const a of c.args ?? []) {
    if (a === `--${name}`) return true;
    if (a.startsWith(`--${name}=`)) return a.slice(name.length + 3);
  }
  return undefined;
}

/** Where a container sees a pod volume, and with which propagation. */
function mountOf(c: IContainer, volume: string): { mountPath: string; mountPropagation?: string; readOnly?: boolean } | undefined {
  return c.volumeMounts?.find((m) => m.name === volume);
}

function hostPathOf(ds: IDaemonSet, volume: string): string | undefined {
  return ds.spec?.template.spec?.volumes?.find((v) => v.name === volume)?.hostPath?.path;
}

/** Resolves a probe's port (number or the name of a port of any container in the pod) to a number. */
function probePort(ds: IDaemonSet, probe: IProbe): number {
  const port = probe.httpGet?.port;
  if (typeof port === 'number') return port;
  for (const c of ds.spec?.template.spec?.containers ?? []) {
    const p = c.ports?.find((x) => x.name === port);
    if (p) return p.containerPort;
  }
  throw new Error(`probe port ${String(port)} is not declared by any container`);
}

/** The host path of the socket a sidecar dials, given its --csi-address inside the container. */
function socketOnHost(ds: IDaemonSet, c: IContainer, address: string): string {
  const inContainer = address.replace(/^unix:\/\//, '');
  for (const m of c.volumeMounts ?? []) {
    if (inContainer.startsWith(m.mountPath + '/')) {
      const host = hostPathOf(ds, m.name);
      assert.ok(host, `${c.name}: the socket ${inContainer} is not on a hostPath volume`);
      return path.join(host, path.relative(m.mountPath, inContainer));
    }
  }
  throw new Error(`${c.name}: ${inContainer} is not inside any of its mounts`);
}

test('deploy/base renders and every object passes its Kubernetes schema with no unknown field', { skip }, async () => {
  const objects = await rendered();
  assert.ok(objects.length >= 10, `only ${objects.length} objects rendered`);
  for (const o of objects) validateObject(o);
  const names = objects.map((o) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`);
  assert.equal(new Set(names).size, names.length, 'no object twice');
});

test('no central component: one DaemonSet, no Deployment, StatefulSet, webhook, CRD or Service', { skip }, async () => {
  const kinds = new Set((await rendered()).map((o) => o.kind));
  for (const forbidden of ['Deployment', 'StatefulSet', 'ReplicaSet', 'ReplicationController', 'Job', 'CronJob', 'Pod',
    'Service', 'MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration', 'CustomResourceDefinition', 'APIService']) {
    assert.ok(!kinds.has(forbidden), `${forbidden} found`);
  }
  assert.equal(all(await rendered(), 'DaemonSet').length, 1);
});

test('CSIDriver: no attach, pod info on mount, capacity tracking, both lifecycles, fsGroup applied', { skip }, async () => {
  const d = only<ICSIDriver>(await rendered(), 'CSIDriver');
  assert.equal(d.metadata?.name, DRIVER);
  assert.equal(d.spec.attachRequired, false);
  assert.equal(d.spec.podInfoOnMount, true);
  assert.equal(d.spec.storageCapacity, true);
  assert.deepEqual([...(d.spec.volumeLifecycleModes ?? [])].sort(), ['Ephemeral', 'Persistent']);
  assert.equal(d.spec.fsGroupPolicy, 'File');
});

test('StorageClasses: late binding, expansion, a pool that exists, ext4 or xfs', { skip }, async () => {
  const classes = all<IStorageClass>(await rendered(), 'StorageClass');
  assert.ok(classes.length >= 1);
  const pools = readFileSync(path.join(BASE, 'pools', 'default'), 'utf8')
    .split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#')).map((l) => l.slice(0, l.indexOf('=')));
  assert.ok(pools.length >= 1);
  for (const sc of classes) {
    const n = sc.metadata?.name;
    assert.equal(sc.provisioner, DRIVER, `${n}`);
    assert.equal(sc.volumeBindingMode, 'WaitForFirstConsumer', `${n}`);
    assert.equal(sc.allowVolumeExpansion, true, `${n}`);
    const pool = sc.parameters?.['pool'];
    assert.ok(pool !== undefined && pools.includes(pool), `${n}: pool "${pool}" is not in pools/default (${pools.join(', ')})`);
    assert.ok(['ext4', 'xfs'].includes(sc.parameters?.['csi.storage.k8s.io/fstype'] ?? ''), `${n}: fstype`);
    // Our classes must not silently become the cluster default.
    assert.notEqual(sc.metadata?.annotations?.['storageclass.kubernetes.io/is-default-class'], 'true');
  }
});

test('csidriver.yaml and storageclasses.yaml are plain YAML, one object per document, identical to what kustomize ships', { skip }, async () => {
  const objects = await rendered();
  for (const [file, kind] of [['csidriver.yaml', 'CSIDriver'], ['storageclasses.yaml', 'StorageClass']] as const) {
    const plain = parseObjects(readFileSync(path.join(BASE, file), 'utf8'), file);
    assert.ok(plain.length >= 1);
    for (const o of plain) {
      assert.equal(o.kind, kind, `${file} holds only ${kind} objects`);
      validateObject(o);
      const shipped = objects.find((x) => x.kind === kind && x.metadata.name === o.metadata.name);
      assert.deepEqual(shipped, o, `${file}: ${o.metadata.name} differs after kustomize`);
    }
    assert.equal(plain.length, objects.filter((x) => x.kind === kind).length, `every ${kind} comes from ${file}`);
  }
});

test('the driver container: privileged, Bidirectional kubelet mount, /dev, pools, its settings', { skip }, async () => {
  const ds = await daemonSet();
  const lode = container(ds, 'lode');
  assert.equal(lode.securityContext?.privileged, true);
  const kubelet = mountOf(lode, 'kubelet-dir');
  assert.equal(kubelet?.mountPath, KUBELET);
  assert.equal(kubelet?.mountPropagation, 'Bidirectional');
  assert.equal(hostPathOf(ds, 'kubelet-dir'), KUBELET);
  assert.equal(mountOf(lode, 'dev')?.mountPath, '/dev');
  assert.equal(hostPathOf(ds, 'dev'), '/dev');
  const pools = mountOf(lode, 'pools');
  assert.ok(pools);
  assert.equal(hostPathOf(ds, 'pools'), pools.mountPath, 'pool paths are the same inside and outside');
  assert.equal(envValue(lode, 'LODE_POOL_ROOT'), pools.mountPath);
  assert.equal(mountOf(lode, 'pool-config')?.mountPath, envValue(lode, 'LODE_POOL_CONFIG'));

  assert.equal(envField(lode, 'NODE_NAME'), 'spec.nodeName');
  assert.equal(envValue(lode, 'LODE_NODE_ID'), '$(NODE_NAME)');
  assert.equal(envValue(lode, 'LODE_DRIVER_NAME'), DRIVER);
  assert.deepEqual(envValue(lode, 'LODE_TARGET_ROOTS')?.split(':'), [KUBELET]);
  // The driver's socket is where kubelet looks for plugins: <kubelet>/plugins/<driver>/.
  assert.equal(socketOnHost(ds, lode, envValue(lode, 'LODE_ENDPOINT') ?? ''), `${KUBELET}/plugins/${DRIVER}/csi.sock`);
  // The image's entrypoint (tini, node with the V8 flags in NODE_OPTIONS) runs as it is.
  assert.equal(lode.command, undefined);
  assert.equal(lode.args, undefined);
  // The request covers what the driver holds (measured: see the comment in daemonset.yaml).
  // With API access the driver also holds the Kubernetes client: 117 MiB idle against 71 MiB.
  const held = envValue(lode, 'LODE_IN_CLUSTER') === 'true' ? 125 : 80;
  assert.ok(parseBytes(String(lode.resources?.requests?.['memory'])) >= held * 2 ** 20, `memory request ${String(lode.resources?.requests?.['memory'])}`);
});

test('csi-provisioner runs per node with capacity tracking and the env it needs', { skip }, async () => {
  const ds = await daemonSet();
  const p = container(ds, 'csi-provisioner');
  assert.equal(flag(p, 'node-deployment'), true);
  assert.equal(flag(p, 'enable-capacity'), true);
  assert.equal(flag(p, 'extra-create-metadata'), true);
  assert.equal(flag(p, 'strict-topology'), true);
  // 1 = the DaemonSet owns the CSIStorageCapacity objects: they outlive pod restarts.
  assert.equal(flag(p, 'capacity-ownerref-level'), '1');
  assert.equal(flag(p, 'node-deployment-immediate-binding'), 'false');
  assert.equal(flag(p, 'leader-election'), undefined, 'per-node provisioners must not elect a leader');
  assert.equal(envField(p, 'NODE_NAME'), 'spec.nodeName');
  assert.equal(envField(p, 'NAMESPACE'), 'metadata.namespace');
  assert.equal(envField(p, 'POD_NAME'), 'metadata.name');
  // The orphan sweep removes source-protection finalizers a deleted restore claim left on a
  // VolumeSnapshot; 0 would turn it off and leave such a VolumeSnapshot undeletable.
  assert.equal(flag(p, 'snapshot-orphan-sweep-interval'), undefined, 'the sweep runs at its default interval');
});

test('csi-snapshotter runs per node: --node-deployment, NODE_NAME, never leader election', { skip }, async () => {
  const ds = await daemonSet();
  const s = container(ds, 'csi-snapshotter');
  // external-snapshotter v8.x, the first major version with the v1 API only and node deployment.
  assert.match(s.image ?? '', /^registry\.k8s\.io\/sig-storage\/csi-snapshotter:v8\.\d+\.\d+$/);
  assert.equal(flag(s, 'node-deployment'), true);
  // cmd/csi-snapshotter/main.go: --node-deployment reads NODE_NAME (fatal when empty) to watch
  // only the VolumeSnapshotContents labelled managed-by=<node>; with --leader-election it exits.
  assert.equal(envField(s, 'NODE_NAME'), 'spec.nodeName');
  assert.equal(flag(s, 'leader-election'), undefined, 'fatal together with --node-deployment');
  for (const a of s.args ?? []) assert.ok(!a.startsWith('--leader-election'), `${a}: no leader election settings`);
  // No volume group snapshots: their informers and RBAC are not wanted.
  assert.ok(!(s.args ?? []).some((a) => a.includes('CSIVolumeGroupSnapshot=true')));
  // The driver stops a call's tools at its client's deadline; both sidecars whose calls copy
  // data get the driver's own limit, not less.
  const { MAX_CALL_MS } = await import('../../src/driver/rpc/call-deadline.js');
  for (const name of ['csi-snapshotter', 'csi-provisioner']) {
    assert.equal(flag(container(ds, name), 'timeout'), `${MAX_CALL_MS / 60_000}m`, `${name} --timeout`);
  }
});

test('every sidecar dials the socket the driver serves', { skip }, async () => {
  const ds = await daemonSet();
  const served = socketOnHost(ds, container(ds, 'lode'), envValue(container(ds, 'lode'), 'LODE_ENDPOINT') ?? '');
  for (const name of ['csi-provisioner', 'csi-resizer', 'csi-snapshotter', 'node-driver-registrar', 'livenessprobe']) {
    const c = container(ds, name);
    const address = flag(c, 'csi-address');
    assert.equal(typeof address, 'string', `${name} --csi-address`);
    assert.equal(socketOnHost(ds, c, address as string), served, `${name} dials another socket`);
  }
  const registrar = container(ds, 'node-driver-registrar');
  assert.equal(flag(registrar, 'kubelet-registration-path'), served, 'kubelet is told the host path of the socket');
  assert.equal(hostPathOf(ds, 'registration-dir'), `${KUBELET}/plugins_registry`);
  assert.equal(mountOf(registrar, 'registration-dir')?.mountPath, '/registration');
});

test('the resizer is leader-elected and never watches pods; its Lease is the one RBAC allows', { skip }, async () => {
  const objects = await rendered();
  const ds = only<IDaemonSet>(objects, 'DaemonSet');
  const r = container(ds, 'csi-resizer');
  assert.equal(flag(r, 'leader-election'), true);
  assert.equal(flag(r, 'handle-volume-inuse-error'), 'false');
  // csi-lib-utils names the Lease "external-resizer-<driver>" with non-alphanumerics made '-'.
  const lease = `external-resizer-${DRIVER.replace(/[^a-zA-Z0-9-]/g, '-')}`;
  const rules = all<IRole>(objects, 'Role').flatMap((role) => role.rules ?? []);
  assert.ok(rules.some((x) => x.resources?.includes('leases') && x.resourceNames?.includes(lease) && x.verbs.includes('update')),
    `no Role lets the resizer update Lease ${lease}`);
});

test('probes reach the real health endpoints', { skip }, async () => {
  const ds = await daemonSet();
  const lode = container(ds, 'lode');
  // Startup, readiness and liveness all go through the livenessprobe sidecar, which calls the
  // driver's CSI Probe: no probe starts a process in the driver's container.
  const lp = container(ds, 'livenessprobe');
  const lpEndpoint = flag(lp, 'http-endpoint');
  assert.equal(typeof lpEndpoint, 'string');
  const lpTimeout = flag(lp, 'probe-timeout');
  assert.equal(typeof lpTimeout, 'string');
  for (const [kind, probe] of [['startup', lode.startupProbe], ['readiness', lode.readinessProbe], ['liveness', lode.livenessProbe]] as const) {
    assert.ok(probe?.httpGet, `the driver has an HTTP ${kind} probe`);
    assert.equal(probe.exec, undefined, `${kind}: no exec probe`);
    assert.equal(probe.httpGet.path, '/healthz');
    assert.equal(probePort(ds, probe), parseListenAddress(lpEndpoint as string).port, `${kind} port = livenessprobe --http-endpoint`);
    // kubelet waits at least as long as the sidecar waits for the driver's answer.
    assert.ok((probe.timeoutSeconds ?? 1) >= Number.parseInt(lpTimeout as string, 10), `${kind} probe timeout outlasts --probe-timeout=${String(lpTimeout)}`);
  }

  // The driver's own /healthz stays on the pod's loopback (the probe command can ask it by hand).
  const address = envValue(lode, 'LODE_METRICS_ADDRESS');
  assert.ok(address, 'LODE_METRICS_ADDRESS is set');
  const parsed = parseListenAddress(address);
  assert.equal(parsed.host, '127.0.0.1', 'metrics stay off the pod network by default');
  assert.ok(existsSync(path.join(REPO_ROOT, 'dist', 'src', 'metrics', 'health-probe.js')), 'the probe command exists in the build');

  const reg = container(ds, 'node-driver-registrar');
  const regEndpoint = flag(reg, 'http-endpoint');
  assert.equal(typeof regEndpoint, 'string');
  assert.ok(reg.livenessProbe?.httpGet);
  assert.equal(reg.livenessProbe.httpGet.path, '/healthz');
  assert.equal(probePort(ds, reg.livenessProbe), parseListenAddress(regEndpoint as string).port);
});

test('images are pinned: a registry path and a version tag on every image, never latest', { skip }, async () => {
  const ds = await daemonSet();
  const spec = ds.spec?.template.spec;
  const containers = [...(spec?.initContainers ?? []), ...(spec?.containers ?? [])];
  for (const c of containers) {
    const image = c.image ?? '';
    const m = /^([a-z0-9.-]+(?::\d+)?\/[a-z0-9._/-]+):([A-Za-z0-9_][A-Za-z0-9._-]{0,127})(@sha256:[a-f0-9]{64})?$/.exec(image);
    assert.ok(m, `${c.name}: image "${image}" is not registry/path:tag[@sha256:...]`);
    assert.notEqual(m[2], 'latest', `${c.name} uses :latest`);
    assert.match(m[2]!, /^v?\d+\.\d+\.\d+/, `${c.name}: tag ${m[2]} is not a version`);
    assert.notEqual(c.imagePullPolicy, 'Always', `${c.name}: a pinned tag needs no Always pull`);
  }
  for (const sidecar of ['csi-provisioner', 'csi-resizer', 'csi-snapshotter', 'csi-node-driver-registrar', 'livenessprobe']) {
    assert.ok(containers.some((c) => c.image?.startsWith(`registry.k8s.io/sig-storage/${sidecar}:`)), `${sidecar} from registry.k8s.io/sig-storage`);
  }
});

test('pod scheduling: every node with Linux, any taint, node-critical priority, requests and limits', { skip }, async () => {
  const ds = await daemonSet();
  const spec = ds.spec?.template.spec;
  assert.ok(spec);
  assert.ok(spec.tolerations?.some((t) => t.operator === 'Exists' && t.key === undefined && t.effect === undefined),
    'tolerates every taint, so the plugin runs (and unmounts) on tainted and draining nodes');
  assert.equal(spec.priorityClassName, 'system-node-critical');
  assert.equal(spec.nodeSelector?.['kubernetes.io/os'], 'linux');
  assert.notEqual(spec.hostNetwork, true, 'not on the host network');
  assert.equal(ds.spec?.updateStrategy?.type, 'RollingUpdate');
  for (const c of spec.containers) {
    for (const r of ['cpu', 'memory']) {
      assert.ok(c.resources?.requests?.[r] !== undefined, `${c.name}: ${r} request`);
      assert.ok(c.resources?.limits?.[r] !== undefined, `${c.name}: ${r} limit`);
    }
    if (c.name !== 'lode') {
      assert.equal(c.securityContext?.privileged ?? false, false, `${c.name} is not privileged`);
      assert.equal(c.securityContext?.allowPrivilegeEscalation, false, `${c.name}`);
      assert.deepEqual(c.securityContext?.capabilities?.drop, ['ALL'], `${c.name}`);
    }
  }
});

test('only the driver, the provisioner, the resizer and the snapshotter get an API token', { skip }, async () => {
  const ds = await daemonSet();
  const spec = ds.spec?.template.spec;
  assert.equal(spec?.automountServiceAccountToken, false);
  const tokenVolumes = new Set((spec?.volumes ?? []).filter((v) => v.projected?.sources?.some((s) => s.serviceAccountToken)).map((v) => v.name));
  assert.equal(tokenVolumes.size, 1);
  const holders = (spec?.containers ?? []).filter((c) => c.volumeMounts?.some((m) => tokenVolumes.has(m.name))).map((c) => c.name).sort();
  assert.deepEqual(holders, ['csi-provisioner', 'csi-resizer', 'csi-snapshotter', 'lode']);
  for (const c of spec?.containers ?? []) {
    const m = c.volumeMounts?.find((x) => tokenVolumes.has(x.name));
    if (m) assert.equal(m.mountPath, '/var/run/secrets/kubernetes.io/serviceaccount', `${c.name}: where client-go looks`);
  }
  const sa = (await rendered()).find((o) => o.kind === 'ServiceAccount' && o.metadata.name === spec?.serviceAccountName);
  assert.ok(sa, `ServiceAccount ${spec?.serviceAccountName} is shipped`);
});

test('the pool ConfigMap the DaemonSet mounts is shipped, with a default entry', { skip }, async () => {
  const objects = await rendered();
  const ds = only<IDaemonSet>(objects, 'DaemonSet');
  const name = ds.spec?.template.spec?.volumes?.find((v) => v.name === 'pool-config')?.configMap?.name;
  const cm = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name === name);
  assert.ok(cm, `ConfigMap ${name} referenced by the DaemonSet is not rendered`);
  assert.match(name ?? '', /^lode-pools-[a-z0-9]{10}$/, 'hash-suffixed, so a pool change rolls the DaemonSet');
  const data = cm['data'] as Record<string, string>;
  assert.ok(typeof data['default'] === 'string' && /^\w[\w-]*=\/var\/lib\/lode\//m.test(data['default']));
});

test('a ResourceQuota in the plugin\'s namespace admits its system-node-critical pods', { skip }, async () => {
  const objects = await rendered();
  const ds = await daemonSet();
  const priority = ds.spec?.template.spec?.priorityClassName;
  assert.equal(priority, 'system-node-critical');
  const quotas = all<IResourceQuota>(objects, 'ResourceQuota').filter((q) => q.metadata?.namespace === ds.metadata?.namespace);
  const matching = quotas.filter((q) => q.spec?.scopeSelector?.matchExpressions?.some((e) =>
    e.scopeName === 'PriorityClass' && e.operator === 'In' && (e.values ?? []).includes(priority)));
  assert.equal(matching.length, 1, 'one quota names the class');
  // It must never be what stops a plugin pod: far more pods than nodes, nothing else limited.
  assert.deepEqual(Object.keys(matching[0]!.spec?.hard ?? {}), ['pods']);
  assert.ok(Number(matching[0]!.spec?.hard?.['pods']) >= 5000);
});

test('namespace admits the privileged plugin and everything lives in it', { skip }, async () => {
  const objects = await rendered();
  const ns = only<K8sObject>(objects, 'Namespace');
  assert.equal(ns.metadata.labels?.['pod-security.kubernetes.io/enforce'], 'privileged');
  const clusterScoped = new Set(['Namespace', 'CSIDriver', 'StorageClass', 'ClusterRole', 'ClusterRoleBinding']);
  for (const o of objects) {
    if (clusterScoped.has(o.kind)) assert.equal(o.metadata.namespace, undefined, `${o.kind} ${o.metadata.name}`);
    else assert.equal(o.metadata.namespace, ns.metadata.name, `${o.kind} ${o.metadata.name}`);
  }
});

const ALLOWED_VERBS = new Set(['get', 'list', 'watch', 'create', 'update', 'patch', 'delete']);

test('RBAC is least privilege: no wildcard, no secrets, no escalation, bound only to our ServiceAccount', { skip }, async () => {
  const objects = await rendered();
  const roles = [...all<IClusterRole>(objects, 'ClusterRole'), ...all<IRole>(objects, 'Role')];
  assert.ok(roles.length > 0);
  for (const role of roles) {
    assert.equal((role as IClusterRole).aggregationRule, undefined, 'no aggregated roles');
    for (const rule of role.rules ?? []) {
      const where = `${role.metadata?.name}: ${JSON.stringify(rule)}`;
      for (const list of [rule.verbs, rule.resources ?? [], rule.apiGroups ?? [], rule.resourceNames ?? []]) {
        assert.ok(!list.includes('*'), `wildcard in ${where}`);
      }
      assert.equal(rule.nonResourceURLs, undefined, where);
      for (const v of rule.verbs) assert.ok(ALLOWED_VERBS.has(v), `verb ${v} in ${where}`);
      for (const r of rule.resources ?? []) {
        assert.ok(!['secrets', 'serviceaccounts/token', 'pods/exec', 'nodes/proxy', 'clusterroles', 'roles', 'rolebindings', 'clusterrolebindings']
          .includes(r), `${r} in ${where}`);
      }
    }
  }
  const bindings = [...all<IRoleBinding>(objects, 'ClusterRoleBinding'), ...all<IRoleBinding>(objects, 'RoleBinding')];
  const sa = only<K8sObject>(objects, 'ServiceAccount');
  for (const b of bindings) {
    assert.ok(!['cluster-admin', 'admin', 'edit', 'view'].includes(b.roleRef.name), `${b.metadata?.name} binds ${b.roleRef.name}`);
    const kind = b.roleRef.kind;
    assert.ok(objects.some((o) => o.kind === kind && o.metadata.name === b.roleRef.name), `${b.metadata?.name}: ${kind} ${b.roleRef.name} not shipped`);
    assert.deepEqual(b.subjects, [{ kind: 'ServiceAccount', name: sa.metadata.name, namespace: sa.metadata.namespace }]);
  }
});

// What external-provisioner v6.3.0 calls on snapshot objects, from pkg/controller/controller.go
// and pkg/controller/snapshot_finalizer_controller.go.
const PROVISIONER_SNAPSHOT_GRANTS = [
  // controller.go getSnapshotSource, setSnapshotFinalizer, removeSnapshotFinalizer: Get.
  'snapshot.storage.k8s.io/volumesnapshots/get',
  // snapshot_finalizer_controller.go: the sweep's informer (List, Watch) and its preflight List.
  'snapshot.storage.k8s.io/volumesnapshots/list', 'snapshot.storage.k8s.io/volumesnapshots/watch',
  // controller.go setSnapshotFinalizer, removeSnapshotFinalizer; the sweep's removeSnapshotFinalizer: Update.
  'snapshot.storage.k8s.io/volumesnapshots/update',
  // controller.go getSnapshotSource: Get of the bound content for its snapshot handle.
  'snapshot.storage.k8s.io/volumesnapshotcontents/get',
];

// What external-snapshotter v8.6.0's csi-snapshotter calls with --node-deployment, the
// CSIVolumeGroupSnapshot gate off and no secrets in the class.
const SNAPSHOTTER_GRANTS = [
  // cmd/csi-snapshotter/main.go: the content informer, filtered by the managed-by label.
  'snapshot.storage.k8s.io/volumesnapshotcontents/list', 'snapshot.storage.k8s.io/volumesnapshotcontents/watch',
  // pkg/sidecar-controller/snapshot_controller.go clearVolumeContentStatus, updateSnapshotContentStatus: Get.
  'snapshot.storage.k8s.io/volumesnapshotcontents/get',
  // snapshot_controller.go removeContentFinalizer, setAnnVolumeSnapshotBeingCreated,
  // removeAnnVolumeSnapshotBeingCreated, through pkg/utils/patch.go PatchVolumeSnapshotContent.
  'snapshot.storage.k8s.io/volumesnapshotcontents/patch',
  // snapshot_controller.go clearVolumeContentStatus: UpdateStatus.
  'snapshot.storage.k8s.io/volumesnapshotcontents/status/update',
  // snapshot_controller.go updateContentErrorStatusWithEvent, updateSnapshotContentStatus: patch of "status".
  'snapshot.storage.k8s.io/volumesnapshotcontents/status/patch',
  // cmd/csi-snapshotter/main.go: the class informer; getSnapshotClass reads its lister only.
  'snapshot.storage.k8s.io/volumesnapshotclasses/list', 'snapshot.storage.k8s.io/volumesnapshotclasses/watch',
  // pkg/sidecar-controller/snapshot_controller_base.go: the event broadcaster (client-go
  // record creates an event, patches a repeated one).
  '/events/create', '/events/patch',
];

test('the snapshotter\'s ClusterRole is exactly what its code calls, bound to the DaemonSet\'s ServiceAccount', { skip }, async () => {
  const objects = await rendered();
  const ds = only<IDaemonSet>(objects, 'DaemonSet');
  const role = objects.find((o) => o.kind === 'ClusterRole' && o.metadata.name === 'lode-snapshotter');
  assert.ok(role, 'ClusterRole lode-snapshotter');
  assert.deepEqual([...grants([role])].sort(), [...new Set(SNAPSHOTTER_GRANTS)].sort());
  const binding = all<IRoleBinding>(objects, 'ClusterRoleBinding').find((b) => b.roleRef.kind === 'ClusterRole' && b.roleRef.name === 'lode-snapshotter');
  assert.ok(binding, 'lode-snapshotter is bound');
  assert.deepEqual(binding.subjects, [{ kind: 'ServiceAccount', name: ds.spec?.template.spec?.serviceAccountName, namespace: ds.metadata?.namespace }]);
});

test('the provisioner\'s ClusterRole covers restores: the snapshot reads and finalizer updates its code makes', { skip }, async () => {
  const objects = await rendered();
  const role = objects.find((o) => o.kind === 'ClusterRole' && o.metadata.name === 'lode-provisioner');
  assert.ok(role, 'ClusterRole lode-provisioner');
  const granted = [...grants([role])].filter((g) => g.startsWith('snapshot.storage.k8s.io/')).sort();
  assert.deepEqual(granted, [...PROVISIONER_SNAPSHOT_GRANTS].sort());
});

test('RBAC grants what the sidecars call, read from their sources, and nothing else', { skip }, async () => {
  // external-provisioner v6.3.0 with --node-deployment --enable-capacity, ownerref level 1;
  // external-resizer v2.2.1 trivial resizer with leader election; external-snapshotter
  // v8.6.0 with --node-deployment (see rbac.yaml comments).
  const expected = new Set([
    '/persistentvolumes/get', '/persistentvolumes/list', '/persistentvolumes/watch', '/persistentvolumes/create',
    '/persistentvolumes/patch', '/persistentvolumes/delete',
    '/persistentvolumeclaims/get', '/persistentvolumeclaims/list', '/persistentvolumeclaims/watch', '/persistentvolumeclaims/update',
    '/persistentvolumeclaims/status/patch',
    'storage.k8s.io/storageclasses/get', 'storage.k8s.io/storageclasses/list', 'storage.k8s.io/storageclasses/watch',
    '/events/create', '/events/patch',
    ...PROVISIONER_SNAPSHOT_GRANTS,
    ...SNAPSHOTTER_GRANTS,
    'storage.k8s.io/csistoragecapacities/get@ns', 'storage.k8s.io/csistoragecapacities/list@ns',
    'storage.k8s.io/csistoragecapacities/watch@ns', 'storage.k8s.io/csistoragecapacities/create@ns',
    'storage.k8s.io/csistoragecapacities/update@ns', 'storage.k8s.io/csistoragecapacities/delete@ns',
    '/pods/get@ns',
    'coordination.k8s.io/leases/create@ns',
    'coordination.k8s.io/leases/get@ns[external-resizer-lode-csi-dev]',
    'coordination.k8s.io/leases/update@ns[external-resizer-lode-csi-dev]',
  ]);
  const granted = grants((await rendered()).filter((o) => !isDriverRole(o)));
  const extra = [...granted].filter((g) => !expected.has(g));
  const missing = [...expected].filter((g) => !granted.has(g));
  assert.deepEqual(extra, [], 'granted but not needed');
  assert.deepEqual(missing, [], 'needed but not granted');
});

/** The roles of the driver itself, which src/driver/cluster/api-permissions.ts defines; the others are the sidecars'. */
function isDriverRole(o: K8sObject): boolean {
  return (o.kind === 'ClusterRole' || o.kind === 'Role') && o.metadata.name === 'lode-driver';
}

test('the driver\'s roles grant exactly the requests src/driver/cluster/api-permissions.ts lists for the default features, bound to the DaemonSet\'s ServiceAccount', { skip }, async () => {
  const objects = await rendered();
  const ds = only<IDaemonSet>(objects, 'DaemonSet');
  const expected = permissionGrants(permissionsAt('base'));
  const roles = objects.filter(isDriverRole);
  assert.deepEqual([...grants(roles)].sort(), [...expected].sort());
  for (const role of roles) {
    const binding = all<IRoleBinding>(objects, role.kind === 'Role' ? 'RoleBinding' : 'ClusterRoleBinding').find((b) => b.roleRef.kind === role.kind && b.roleRef.name === role.metadata.name);
    assert.ok(binding, `${role.kind} ${role.metadata.name} is bound`);
    assert.deepEqual(binding.subjects, [{ kind: 'ServiceAccount', name: ds.spec?.template.spec?.serviceAccountName, namespace: ds.metadata?.namespace }]);
  }
});

// The resizer sidecar is leader-elected across nodes; it only works for Lode if it takes its
// "trivial resizer" path, i.e. the driver expands on the node alone (docs/install.md, Expansion).
test('the driver expands on the node only, as the leader-elected resizer needs', async () => {
  const { controllerCapabilities } = await import('../../src/driver/controller/service.js');
  const { NODE_CAPABILITIES } = await import('../../src/driver/node/service.js');
  assert.ok((NODE_CAPABILITIES as readonly string[]).includes('EXPAND_VOLUME'), 'node EXPAND_VOLUME');
  assert.ok(!controllerCapabilities(false).includes('EXPAND_VOLUME'),
    'controller EXPAND_VOLUME makes the resizer call ControllerExpandVolume on whichever node leads, which lacks most volumes');
  const text = JSON.stringify(await rendered());
  assert.ok(!text.includes('--controller-expansion') && !text.includes('LODE_CONTROLLER_EXPANSION'),
    'the shipped DaemonSet leaves controller expansion off');
});
