// StatefulSet: policies with known values, a selector its template's labels match, a template that restarts Always; most of the spec frozen.
import { forbidden, invalid, notSupported, required, type FieldError } from './field-error.js';
import { at, isObject, jsonEqual, list, type Json } from './json.js';
import { validatePodSpec } from './pod-spec.js';
import { validateClaimSpec } from './claim-spec.js';
import { checkSubdomain } from './names.js';
import { labelSelectorMatches } from '../api/selectors.js';
import type { V1LabelSelector } from '@kubernetes/client-node';

const RETENTION = ['Delete', 'Retain'] as const;
/** The spec fields an update may change (apps validation). */
const MUTABLE = ['replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy', 'minReadySeconds'];

export function validateStatefulSet(o: Json): FieldError[] {
  const errors: FieldError[] = [];
  const spec = o.spec;
  if (!isObject(spec)) return [required('spec')];
  const replicas = spec.replicas;
  if (replicas !== undefined && (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0)) errors.push(invalid('spec.replicas', replicas, 'must be greater than or equal to 0'));
  if (spec.podManagementPolicy !== undefined && spec.podManagementPolicy !== 'OrderedReady' && spec.podManagementPolicy !== 'Parallel') {
    errors.push(invalid('spec.podManagementPolicy', spec.podManagementPolicy, "must be 'OrderedReady' or 'Parallel'"));
  }
  const strategy = spec.updateStrategy;
  if (isObject(strategy)) {
    if (strategy.type !== undefined && strategy.type !== 'RollingUpdate' && strategy.type !== 'OnDelete') errors.push(invalid('spec.updateStrategy', strategy, "must be 'RollingUpdate' or 'OnDelete'"));
    const partition = at(strategy, 'rollingUpdate.partition');
    if (partition !== undefined && (typeof partition !== 'number' || partition < 0)) errors.push(invalid('spec.updateStrategy.rollingUpdate.partition', partition, 'must be greater than or equal to 0'));
  }
  const retention = spec.persistentVolumeClaimRetentionPolicy;
  if (isObject(retention)) {
    for (const f of ['whenDeleted', 'whenScaled']) {
      if (retention[f] !== undefined && !(RETENTION as readonly unknown[]).includes(retention[f])) errors.push(notSupported(`spec.persistentVolumeClaimRetentionPolicy.${f}`, retention[f], RETENTION));
    }
  }
  if (typeof spec.serviceName === 'string' && spec.serviceName !== '') errors.push(...checkSubdomain('spec.serviceName', spec.serviceName));
  const selector = spec.selector;
  const labels = at(spec, 'template.metadata.labels');
  if (!isObject(selector) || (!isObject(selector.matchLabels) && list(selector.matchExpressions).length === 0)) {
    errors.push(invalid('spec.selector', selector ?? null, 'empty selector is invalid for statefulset'));
  } else if (!labelSelectorMatches(selector as V1LabelSelector, isObject(labels) ? (labels as Record<string, string>) : {})) {
    errors.push(invalid('spec.template.metadata.labels', labels ?? {}, '`selector` does not match template `labels`'));
  }
  const template = spec.template;
  if (!isObject(template)) errors.push(required('spec.template'));
  else {
    errors.push(...validatePodSpec(template.spec, 'spec.template.spec'));
    const restart = at(template, 'spec.restartPolicy');
    if (restart !== undefined && restart !== 'Always') errors.push(notSupported('spec.template.spec.restartPolicy', restart, ['Always']));
    if (at(template, 'spec.activeDeadlineSeconds') !== undefined) errors.push(forbidden('spec.template.spec.activeDeadlineSeconds', 'activeDeadlineSeconds in StatefulSet is not Supported'));
  }
  list(spec.volumeClaimTemplates).forEach((t, i) => {
    const f = `spec.volumeClaimTemplates[${i}]`;
    const name = at(t, 'metadata.name');
    if (typeof name !== 'string' || name === '') errors.push(required(`${f}.metadata.name`));
    errors.push(...validateClaimSpec(isObject(t) ? t.spec : undefined, `${f}.spec`, false));
  });
  return errors;
}

export function validateStatefulSetUpdate(o: Json, old: Json): FieldError[] {
  const next = structuredClone(isObject(o.spec) ? o.spec : {});
  const prev = isObject(old.spec) ? old.spec : {};
  for (const f of MUTABLE) next[f] = prev[f];
  if (!jsonEqual(next, prev)) {
    return [forbidden('spec', `updates to statefulset spec for fields other than ${MUTABLE.slice(0, -1).map((f) => `'${f}'`).join(', ')} and '${MUTABLE[MUTABLE.length - 1]}' are forbidden`)];
  }
  return [];
}
