// The DefaultStorageClass admission plugin's rule: a claim that names no class at all gets the cluster's default class (applied to every claim created, by whichever writer).
import type { V1PersistentVolumeClaim, V1StorageClass } from '@kubernetes/client-node';

const ANN_DEFAULT = 'storageclass.kubernetes.io/is-default-class';
const ANN_DEFAULT_BETA = 'storageclass.beta.kubernetes.io/is-default-class';

function isDefault(sc: V1StorageClass): boolean {
  const a = sc.metadata?.annotations ?? {};
  return a[ANN_DEFAULT] === 'true' || a[ANN_DEFAULT_BETA] === 'true';
}

/** The default class; with several, the newest (then the first by name), as upstream picks. */
export function defaultStorageClass(classes: V1StorageClass[]): string | undefined {
  const time = (sc: V1StorageClass): number => new Date(sc.metadata?.creationTimestamp ?? 0).getTime();
  const defaults = classes.filter(isDefault).sort((a, b) => time(b) - time(a) || (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''));
  return defaults[0]?.metadata?.name;
}

/**
 * Sets spec.storageClassName on a claim being created when the field is absent; an empty
 * string is an explicit "no class" and is left alone. Returns whether it set one.
 */
export function applyDefaultStorageClass(pvc: V1PersistentVolumeClaim, classes: V1StorageClass[]): boolean {
  if (pvc.spec === undefined || pvc.spec.storageClassName !== undefined) return false;
  const name = defaultStorageClass(classes);
  if (name === undefined) return false;
  pvc.spec.storageClassName = name;
  return true;
}
