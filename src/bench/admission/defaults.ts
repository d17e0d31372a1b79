// The defaults the API server fills in on create for the modelled kinds (core/v1, apps/v1, storage/v1 defaulting and the DefaultTolerationSeconds admission plugin).
import { child, isObject, list, type Json } from './json.js';

const setIfAbsent = (o: Json, key: string, value: unknown): void => {
  if (o[key] === undefined) o[key] = value;
};

function claimSpecDefaults(spec: unknown): void {
  if (isObject(spec)) setIfAbsent(spec, 'volumeMode', 'Filesystem');
}

/** An image without a tag, or tagged latest, is pulled Always; anything else IfNotPresent. */
function pullPolicy(image: unknown): string {
  if (typeof image !== 'string') return 'IfNotPresent';
  const afterDigest = image.split('@');
  if (afterDigest.length > 1) return 'IfNotPresent';
  const lastPart = image.slice(image.lastIndexOf('/') + 1);
  const colon = lastPart.lastIndexOf(':');
  return colon < 0 || lastPart.slice(colon + 1) === 'latest' ? 'Always' : 'IfNotPresent';
}

function containerDefaults(c: unknown): void {
  if (!isObject(c)) return;
  setIfAbsent(c, 'terminationMessagePath', '/dev/termination-log');
  setIfAbsent(c, 'terminationMessagePolicy', 'File');
  setIfAbsent(c, 'imagePullPolicy', pullPolicy(c.image));
  // A limit without a request requests the limit.
  const res = c.resources;
  if (isObject(res) && isObject(res.limits)) {
    const requests = child(res, 'requests');
    for (const [k, v] of Object.entries(res.limits)) setIfAbsent(requests, k, v);
  }
  for (const p of list(c.ports)) if (isObject(p)) setIfAbsent(p, 'protocol', 'TCP');
}

function podSpecDefaults(spec: unknown): void {
  if (!isObject(spec)) return;
  setIfAbsent(spec, 'restartPolicy', 'Always');
  setIfAbsent(spec, 'dnsPolicy', 'ClusterFirst');
  setIfAbsent(spec, 'schedulerName', 'default-scheduler');
  setIfAbsent(spec, 'terminationGracePeriodSeconds', 30);
  setIfAbsent(spec, 'securityContext', {});
  setIfAbsent(spec, 'enableServiceLinks', true);
  for (const c of [...list(spec.containers), ...list(spec.initContainers)]) containerDefaults(c);
  for (const v of list(spec.volumes)) {
    if (isObject(v) && isObject(v.ephemeral) && isObject(v.ephemeral.volumeClaimTemplate)) claimSpecDefaults(v.ephemeral.volumeClaimTemplate.spec);
  }
}

/** What admission plugins add to a Pod on create: the ServiceAccount plugin's account, Priority's 0. */
function podCreateAdmissionDefaults(spec: unknown): void {
  if (!isObject(spec)) return;
  setIfAbsent(spec, 'serviceAccountName', 'default');
  setIfAbsent(spec, 'priority', 0);
  setIfAbsent(spec, 'preemptionPolicy', 'PreemptLowerPriority');
}

/** DefaultTolerationSeconds, on create and update: tolerate not-ready and unreachable nodes for 300 s unless the pod says otherwise. */
function defaultTolerations(spec: unknown): void {
  if (!isObject(spec)) return;
  const tolerations = list(spec.tolerations).slice();
  for (const key of ['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable']) {
    const covered = tolerations.some((t) => isObject(t) && (t.key === key || (t.key === undefined && t.operator === 'Exists')) && (t.effect === undefined || t.effect === '' || t.effect === 'NoExecute'));
    if (!covered) tolerations.push({ key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 });
  }
  spec.tolerations = tolerations;
}

/** Fills the defaults of one object in place (the caller passes a copy). */
export function applyDefaults(kind: string, o: Json, create: boolean): void {
  switch (kind) {
    case 'PersistentVolumeClaim':
      claimSpecDefaults(o.spec);
      break;
    case 'PersistentVolume':
      if (isObject(o.spec)) {
        setIfAbsent(o.spec, 'persistentVolumeReclaimPolicy', 'Retain');
        setIfAbsent(o.spec, 'volumeMode', 'Filesystem');
      }
      break;
    case 'StorageClass':
      setIfAbsent(o, 'reclaimPolicy', 'Delete');
      setIfAbsent(o, 'volumeBindingMode', 'Immediate');
      break;
    case 'CSIDriver': {
      const spec = child(o, 'spec');
      setIfAbsent(spec, 'attachRequired', true);
      setIfAbsent(spec, 'podInfoOnMount', false);
      setIfAbsent(spec, 'storageCapacity', false);
      setIfAbsent(spec, 'volumeLifecycleModes', ['Persistent']);
      setIfAbsent(spec, 'fsGroupPolicy', 'ReadWriteOnceWithFSType');
      setIfAbsent(spec, 'requiresRepublish', false);
      setIfAbsent(spec, 'seLinuxMount', false);
      break;
    }
    case 'Pod':
      podSpecDefaults(o.spec);
      if (create) podCreateAdmissionDefaults(o.spec);
      defaultTolerations(o.spec);
      break;
    case 'StatefulSet': {
      if (!isObject(o.spec)) break;
      const spec = o.spec;
      setIfAbsent(spec, 'replicas', 1);
      setIfAbsent(spec, 'podManagementPolicy', 'OrderedReady');
      setIfAbsent(spec, 'revisionHistoryLimit', 10);
      const strategy = child(spec, 'updateStrategy');
      setIfAbsent(strategy, 'type', 'RollingUpdate');
      if (strategy.type === 'RollingUpdate') setIfAbsent(child(strategy, 'rollingUpdate'), 'partition', 0);
      const retention = child(spec, 'persistentVolumeClaimRetentionPolicy');
      setIfAbsent(retention, 'whenDeleted', 'Retain');
      setIfAbsent(retention, 'whenScaled', 'Retain');
      if (isObject(spec.template)) podSpecDefaults(spec.template.spec);
      for (const t of list(spec.volumeClaimTemplates)) if (isObject(t)) claimSpecDefaults(t.spec);
      break;
    }
  }
}
