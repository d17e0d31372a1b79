// The entry point of admission: validation and defaulting of one object of a kind, on create or update, as the API server does them.
import type { FieldError } from './field-error.js';
import { isObject, type Json } from './json.js';
import { validateMetadata, type MetaRules } from './metadata.js';
import { applyDefaults } from './defaults.js';
import { validateClaim, validateClaimUpdate } from './persistent-volume-claim.js';
import { validatePersistentVolume, validatePersistentVolumeUpdate } from './persistent-volume.js';
import { validateStorageClass, validateStorageClassUpdate } from './storage-class.js';
import { validateCsiDriver, validateCsiDriverUpdate } from './csi-driver.js';
import { validateStorageCapacity } from './csi-storage-capacity.js';
import { validateNode } from './node.js';
import { validatePod, validatePodUpdate } from './pod.js';
import { validateStatefulSet, validateStatefulSetUpdate } from './statefulset.js';
import { validateSnapshot, validateSnapshotClass, validateSnapshotContent, validateSnapshotContentUpdate, validateSnapshotUpdate } from './snapshots.js';
import { checkDataAnnotations, checkPoolsAnnotation } from './bench-annotations.js';
import { isNamespacedKind } from './scope.js';

export type { FieldError } from './field-error.js';

export interface AdmissionResult {
  object: Record<string, unknown>;
  errors: FieldError[];
}

interface KindRules {
  create: (o: Json) => FieldError[];
  update?: (o: Json, old: Json) => FieldError[];
}

const RULES: Record<string, KindRules> = {
  Node: { create: (o) => [...validateNode(o), ...checkPoolsAnnotation(o)] },
  StorageClass: { create: validateStorageClass, update: validateStorageClassUpdate },
  CSIDriver: { create: validateCsiDriver, update: validateCsiDriverUpdate },
  PersistentVolume: { create: validatePersistentVolume, update: validatePersistentVolumeUpdate },
  PersistentVolumeClaim: { create: validateClaim, update: validateClaimUpdate },
  Pod: { create: (o) => [...validatePod(o), ...checkDataAnnotations(o, 'metadata')], update: validatePodUpdate },
  StatefulSet: { create: (o) => [...validateStatefulSet(o), ...checkDataAnnotations(o, 'spec.template.metadata')], update: validateStatefulSetUpdate },
  CSIStorageCapacity: { create: validateStorageCapacity },
  VolumeSnapshotClass: { create: validateSnapshotClass },
  VolumeSnapshot: { create: validateSnapshot, update: validateSnapshotUpdate },
  VolumeSnapshotContent: { create: validateSnapshotContent, update: validateSnapshotContentUpdate },
};

function nameRule(kind: string): MetaRules['name'] {
  if (kind === 'Namespace') return 'label';
  if (kind === 'Service') return '1035';
  return 'subdomain';
}

/**
 * Validates and defaults one object of a kind for create (old undefined) or update (old
 * = the stored object), as the API server's validation and defaulting would. Kinds
 * without rules of their own (stored, not acted upon) get the metadata rules. Never
 * mutates its input.
 */
export function admit(kind: string, object: Record<string, unknown>, old?: Record<string, unknown>): AdmissionResult {
  const o: Json = structuredClone(object);
  // Defaulting runs before validation, as in the API server (decode, default, then validate).
  applyDefaults(kind, o, old === undefined);
  const errors = validateMetadata(o, { namespaced: isNamespacedKind(kind), name: nameRule(kind) });
  const rules = RULES[kind];
  if (rules !== undefined) {
    errors.push(...rules.create(o));
    if (old !== undefined && rules.update !== undefined && isObject(old)) errors.push(...rules.update(o, old));
  }
  return { object: o, errors };
}
