// Pod: PodSpec rules on create; on update only images, activeDeadlineSeconds, added tolerations and the grace period may change.
import { forbidden, type FieldError } from './field-error.js';
import { isObject, jsonEqual, list, type Json } from './json.js';
import { validatePodSpec } from './pod-spec.js';

export function validatePod(o: Json): FieldError[] {
  return validatePodSpec(o.spec, 'spec');
}

const MUTABLE = 'pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)';

export function validatePodUpdate(o: Json, old: Json): FieldError[] {
  const next = structuredClone(isObject(o.spec) ? o.spec : {});
  const prev = isObject(old.spec) ? old.spec : {};
  // Copy what may change from the old spec; anything still different is forbidden.
  for (const key of ['containers', 'initContainers'] as const) {
    const prevList = list(prev[key]);
    list(next[key]).forEach((c, i) => {
      const p = prevList[i];
      if (isObject(c) && isObject(p)) c.image = p.image;
    });
  }
  next.activeDeadlineSeconds = prev.activeDeadlineSeconds;
  next.terminationGracePeriodSeconds = prev.terminationGracePeriodSeconds;
  const oldTolerations = list(prev.tolerations);
  const newTolerations = list(next.tolerations);
  if (oldTolerations.every((t) => newTolerations.some((n) => jsonEqual(n, t)))) next.tolerations = prev.tolerations;
  // Scheduling (the binding subresource) sets nodeName once; the bench's scheduler writes it through the store.
  if (prev.nodeName === undefined || prev.nodeName === '') next.nodeName = prev.nodeName;
  if (!jsonEqual(next, prev)) return [forbidden('spec', MUTABLE)];
  return [];
}
