// PodSpec rules, shared by Pods and StatefulSet templates: containers, resources, volumes, tolerations, policies.
import { duplicate, forbidden, invalid, notSupported, required, type FieldError } from './field-error.js';
import { isObject, list, type Json } from './json.js';
import { checkLabel, checkQualifiedName, checkSubdomain } from './names.js';
import { checkNonNegative } from './quantities.js';
import { validateClaimSpec } from './claim-spec.js';
import { isExtendedResource, isHugePages } from '../api/resource-names.js';

export const RESTART_POLICIES = ['Always', 'Never', 'OnFailure'] as const;
const DNS_POLICIES = ['ClusterFirst', 'ClusterFirstWithHostNet', 'Default', 'None'] as const;
const TAINT_EFFECTS = ['NoExecute', 'NoSchedule', 'PreferNoSchedule'] as const;
const OPERATORS = ['Equal', 'Exists'] as const;
/** The volume sources a pod volume may name; exactly one per volume. */
const VOLUME_SOURCES = ['hostPath', 'emptyDir', 'gcePersistentDisk', 'awsElasticBlockStore', 'gitRepo', 'secret', 'nfs', 'iscsi', 'glusterfs',
  'persistentVolumeClaim', 'rbd', 'flexVolume', 'cinder', 'cephfs', 'flocker', 'downwardAPI', 'fc', 'azureFile', 'configMap', 'vsphereVolume',
  'quobyte', 'azureDisk', 'photonPersistentDisk', 'projected', 'portworxVolume', 'scaleIO', 'storageos', 'csi', 'ephemeral', 'image'];
/** The resource names a container may request besides hugepages-* and extended ones. */
const CONTAINER_RESOURCES = new Set(['cpu', 'memory', 'ephemeral-storage']);

/** Resources that may not be overcommitted: requests must equal limits (hugepages, extended resources). */
function isOvercommitForbidden(name: string): boolean {
  return isHugePages(name) || isExtendedResource(name);
}

function checkResources(c: Json, field: string, errors: FieldError[]): void {
  const res = c.resources;
  if (res === undefined) return;
  if (!isObject(res)) {
    errors.push(invalid(field, res, 'must be an object'));
    return;
  }
  const values: Record<'requests' | 'limits', Map<string, number>> = { requests: new Map(), limits: new Map() };
  for (const part of ['limits', 'requests'] as const) {
    const m = res[part];
    if (m === undefined) continue;
    if (!isObject(m)) {
      errors.push(invalid(`${field}.${part}`, m, 'must be a map of quantities'));
      continue;
    }
    for (const [k, v] of Object.entries(m)) {
      errors.push(...checkQualifiedName(`${field}.${part}[${k}]`, k));
      if (!CONTAINER_RESOURCES.has(k) && !isHugePages(k) && !isExtendedResource(k)) errors.push(invalid(`${field}.${part}[${k}]`, k, 'must be a standard resource for containers'));
      const n = checkNonNegative(`${field}.${part}[${k}]`, v, errors);
      if (n === undefined) continue;
      values[part].set(k, n);
      if (isExtendedResource(k) && !Number.isInteger(n)) errors.push(invalid(`${field}.${part}[${k}]`, v, 'must be an integer'));
    }
  }
  for (const [k, req] of values.requests) {
    const lim = values.limits.get(k);
    const rawReq = (res.requests as Json)[k];
    if (isOvercommitForbidden(k)) {
      if (lim === undefined) errors.push(required(`${field}.limits`, 'Limit must be set for non overcommitable resources'));
      else if (lim !== req) errors.push(invalid(`${field}.requests`, rawReq, `must be equal to ${k} limit of ${String((res.limits as Json)[k])}`));
    } else if (lim !== undefined && req > lim) {
      errors.push(invalid(`${field}.requests`, rawReq, `must be less than or equal to ${k} limit of ${String((res.limits as Json)[k])}`));
    }
  }
}

function checkContainers(spec: Json, key: 'containers' | 'initContainers', field: string, errors: FieldError[], names: Set<string>): void {
  const cs = spec[key];
  if (cs === undefined) {
    if (key === 'containers') errors.push(required(`${field}.containers`));
    return;
  }
  if (!Array.isArray(cs)) {
    errors.push(invalid(`${field}.${key}`, cs, 'must be a list'));
    return;
  }
  if (key === 'containers' && cs.length === 0) errors.push(required(`${field}.containers`));
  cs.forEach((c, i) => {
    const f = `${field}.${key}[${i}]`;
    if (!isObject(c)) {
      errors.push(invalid(f, c, 'must be an object'));
      return;
    }
    if (typeof c.name !== 'string' || c.name === '') errors.push(required(`${f}.name`));
    else {
      errors.push(...checkLabel(`${f}.name`, c.name));
      if (names.has(c.name)) errors.push(duplicate(`${f}.name`, c.name));
      names.add(c.name);
    }
    if (typeof c.image !== 'string' || c.image.trim() === '') errors.push(required(`${f}.image`));
    if (c.imagePullPolicy !== undefined && !['Always', 'IfNotPresent', 'Never'].includes(String(c.imagePullPolicy))) errors.push(notSupported(`${f}.imagePullPolicy`, c.imagePullPolicy, ['Always', 'IfNotPresent', 'Never']));
    checkResources(c, `${f}.resources`, errors);
  });
}

function checkVolumes(spec: Json, field: string, errors: FieldError[]): void {
  const seen = new Set<string>();
  list(spec.volumes).forEach((v, i) => {
    const f = `${field}.volumes[${i}]`;
    if (!isObject(v)) {
      errors.push(invalid(f, v, 'must be an object'));
      return;
    }
    if (typeof v.name !== 'string' || v.name === '') errors.push(required(`${f}.name`));
    else {
      errors.push(...checkLabel(`${f}.name`, v.name));
      if (seen.has(v.name)) errors.push(duplicate(`${f}.name`, v.name));
      seen.add(v.name);
    }
    const sources = VOLUME_SOURCES.filter((s) => v[s] !== undefined);
    if (sources.length === 0) errors.push(required(f, 'must specify a volume type'));
    else if (sources.length > 1) errors.push(forbidden(`${f}.${sources[1]}`, 'may not specify more than 1 volume type'));
    if (v.persistentVolumeClaim !== undefined) {
      const claim = v.persistentVolumeClaim;
      if (!isObject(claim) || typeof claim.claimName !== 'string' || claim.claimName === '') errors.push(required(`${f}.persistentVolumeClaim.claimName`));
    }
    if (v.ephemeral !== undefined) {
      const tmpl = isObject(v.ephemeral) ? v.ephemeral.volumeClaimTemplate : undefined;
      if (!isObject(tmpl)) errors.push(required(`${f}.ephemeral.volumeClaimTemplate`));
      else errors.push(...validateClaimSpec(tmpl.spec, `${f}.ephemeral.volumeClaimTemplate.spec`));
    }
    if (v.csi !== undefined) {
      if (!isObject(v.csi) || typeof v.csi.driver !== 'string' || v.csi.driver === '') errors.push(required(`${f}.csi.driver`));
    }
  });
}

function checkTolerations(spec: Json, field: string, errors: FieldError[]): void {
  list(spec.tolerations).forEach((t, i) => {
    const f = `${field}.tolerations[${i}]`;
    if (!isObject(t)) {
      errors.push(invalid(f, t, 'must be an object'));
      return;
    }
    const op = t.operator ?? 'Equal';
    if (typeof t.key === 'string' && t.key !== '') errors.push(...checkQualifiedName(`${f}.key`, t.key));
    else if (op !== 'Exists') errors.push(invalid(`${f}.operator`, op, 'operator must be Exists when `key` is empty, which means "match all values and all keys"'));
    if (!(OPERATORS as readonly unknown[]).includes(op)) errors.push(notSupported(`${f}.operator`, op, OPERATORS));
    else if (op === 'Exists' && t.value !== undefined && t.value !== '') errors.push(invalid(`${f}.operator`, t, 'value must be empty when `operator` is \'Exists\''));
    if (t.effect !== undefined && t.effect !== '' && !(TAINT_EFFECTS as readonly unknown[]).includes(t.effect)) errors.push(notSupported(`${f}.effect`, t.effect, TAINT_EFFECTS));
    if (t.tolerationSeconds !== undefined && t.effect !== 'NoExecute') errors.push(invalid(`${f}.effect`, t.effect ?? '', 'effect must be \'NoExecute\' when `tolerationSeconds` is set'));
  });
}

/** Validates a PodSpec at `field` ("spec", "spec.template.spec"). */
export function validatePodSpec(spec: unknown, field: string): FieldError[] {
  if (!isObject(spec)) return [required(field)];
  const errors: FieldError[] = [];
  const names = new Set<string>();
  checkContainers(spec, 'containers', field, errors, names);
  checkContainers(spec, 'initContainers', field, errors, names);
  checkVolumes(spec, field, errors);
  checkTolerations(spec, field, errors);
  if (spec.restartPolicy !== undefined && !(RESTART_POLICIES as readonly unknown[]).includes(spec.restartPolicy)) errors.push(notSupported(`${field}.restartPolicy`, spec.restartPolicy, RESTART_POLICIES));
  if (spec.dnsPolicy !== undefined && !(DNS_POLICIES as readonly unknown[]).includes(spec.dnsPolicy)) errors.push(notSupported(`${field}.dnsPolicy`, spec.dnsPolicy, DNS_POLICIES));
  if (typeof spec.nodeName === 'string' && spec.nodeName !== '') errors.push(...checkSubdomain(`${field}.nodeName`, spec.nodeName));
  if (typeof spec.schedulerName === 'string' && spec.schedulerName !== '') errors.push(...checkSubdomain(`${field}.schedulerName`, spec.schedulerName));
  if (typeof spec.serviceAccountName === 'string' && spec.serviceAccountName !== '') errors.push(...checkSubdomain(`${field}.serviceAccountName`, spec.serviceAccountName));
  if (spec.terminationGracePeriodSeconds !== undefined && (typeof spec.terminationGracePeriodSeconds !== 'number' || !Number.isInteger(spec.terminationGracePeriodSeconds))) {
    errors.push(invalid(`${field}.terminationGracePeriodSeconds`, spec.terminationGracePeriodSeconds, 'must be an integer'));
  }
  if (spec.activeDeadlineSeconds !== undefined && (typeof spec.activeDeadlineSeconds !== 'number' || spec.activeDeadlineSeconds < 1)) {
    errors.push(invalid(`${field}.activeDeadlineSeconds`, spec.activeDeadlineSeconds, 'must be between 1 and 2147483647, inclusive'));
  }
  if (spec.nodeSelector !== undefined && !isObject(spec.nodeSelector)) errors.push(invalid(`${field}.nodeSelector`, spec.nodeSelector, 'must be a map of strings'));
  return errors;
}
