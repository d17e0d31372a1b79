// PersistentVolume: capacity, access modes, exactly one source, reclaim policy; the source and volume mode are frozen once created.
import { forbidden, invalid, notSupported, required, type FieldError } from './field-error.js';
import { isObject, jsonEqual, type Json } from './json.js';
import { checkAccessModes, checkVolumeMode } from './claim-spec.js';
import { checkSubdomain } from './names.js';
import { checkPositive } from './quantities.js';

const RECLAIM_POLICIES = ['Delete', 'Recycle', 'Retain'] as const;
/** The persistentVolumeSource members the bench may see. */
const PV_SOURCES = ['csi', 'local', 'hostPath', 'nfs', 'iscsi', 'fc', 'rbd', 'cephfs', 'cinder', 'flexVolume', 'azureDisk', 'azureFile', 'gcePersistentDisk', 'awsElasticBlockStore', 'vsphereVolume'];

export function validatePersistentVolume(o: Json): FieldError[] {
  const errors: FieldError[] = [];
  const spec = o.spec;
  if (!isObject(spec)) return [required('spec')];
  const cap = spec.capacity;
  if (!isObject(cap) || Object.keys(cap).length === 0) errors.push(required('spec.capacity'));
  else {
    if (cap.storage === undefined || Object.keys(cap).length > 1) errors.push(notSupported('spec.capacity', Object.keys(cap).sort(), ['storage']));
    if (cap.storage !== undefined) checkPositive('spec.capacity[storage]', cap.storage, errors);
  }
  checkAccessModes('spec.accessModes', spec.accessModes, errors);
  const policy = spec.persistentVolumeReclaimPolicy;
  if (policy !== undefined && !(RECLAIM_POLICIES as readonly unknown[]).includes(policy)) errors.push(notSupported('spec.persistentVolumeReclaimPolicy', policy, RECLAIM_POLICIES));
  checkVolumeMode('spec.volumeMode', spec.volumeMode, errors);
  if (typeof spec.storageClassName === 'string' && spec.storageClassName !== '') errors.push(...checkSubdomain('spec.storageClassName', spec.storageClassName));
  const sources = PV_SOURCES.filter((s) => spec[s] !== undefined);
  if (sources.length === 0) errors.push(required('spec', 'must specify a volume type'));
  else if (sources.length > 1) errors.push(forbidden(`spec.${sources[1]}`, 'may not specify more than 1 volume type'));
  if (spec.csi !== undefined) {
    const csi = isObject(spec.csi) ? spec.csi : {};
    if (typeof csi.driver !== 'string' || csi.driver === '') errors.push(required('spec.csi.driver'));
    if (typeof csi.volumeHandle !== 'string' || csi.volumeHandle === '') errors.push(required('spec.csi.volumeHandle'));
  }
  if (spec.local !== undefined) {
    if (!isObject(spec.local) || typeof spec.local.path !== 'string' || spec.local.path === '') errors.push(required('spec.local.path'));
    if (spec.nodeAffinity === undefined) errors.push(required('spec.nodeAffinity', 'Local volume requires node affinity'));
  }
  if (spec.nodeAffinity !== undefined && (!isObject(spec.nodeAffinity) || !isObject(spec.nodeAffinity.required))) {
    errors.push(required('spec.nodeAffinity.required', 'must specify required node constraints'));
  }
  return errors;
}

export function validatePersistentVolumeUpdate(o: Json, old: Json): FieldError[] {
  const errors: FieldError[] = [];
  const next = isObject(o.spec) ? o.spec : {};
  const prev = isObject(old.spec) ? old.spec : {};
  if (PV_SOURCES.some((s) => !jsonEqual(next[s], prev[s]))) errors.push(forbidden('spec.persistentvolumesource', 'spec.persistentvolumesource is immutable after creation'));
  if (!jsonEqual(next.volumeMode, prev.volumeMode)) errors.push(invalid('spec.volumeMode', next.volumeMode, 'field is immutable'));
  if (prev.nodeAffinity !== undefined && !jsonEqual(next.nodeAffinity, prev.nodeAffinity)) errors.push(invalid('spec.nodeAffinity', next.nodeAffinity, 'field is immutable'));
  return errors;
}
