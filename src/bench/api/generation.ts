// metadata.generation as the API server's registry strategies keep it: which kinds have one, and which writes bump it.
import type { AnyObject, Kind } from './kinds.js';
import { canonicalJson } from './canonical-json.js';

/**
 * How a kind's generation moves, per its strategy's PrepareForCreate/PrepareForUpdate:
 * `spec`: 1 on create, +1 when spec changes (apps/v1 StatefulSet; policy/v1 PodDisruptionBudget;
 * networking/v1 Ingress, IngressClass and NetworkPolicy); `custom`: a custom resource's,
 * 1 on create, +1 when anything but metadata changes (status is kept on a main-resource
 * write when the CRD has a status subresource, so a status write does not count). Other
 * kinds (core/v1 in 1.32, storage, RBAC, autoscaling) have none.
 */
const RULES: Partial<Record<Kind, 'spec' | 'custom'>> = {
  StatefulSet: 'spec',
  PodDisruptionBudget: 'spec',
  Ingress: 'spec',
  IngressClass: 'spec',
  NetworkPolicy: 'spec',
  VolumeSnapshotClass: 'custom',
  VolumeSnapshot: 'custom',
  VolumeSnapshotContent: 'custom',
};

export function hasGeneration(kind: Kind): boolean {
  return RULES[kind] !== undefined;
}

/** What a write must change to move the generation. */
function tracked(kind: Kind, o: AnyObject): unknown {
  const { metadata: _m, status: _s, ...rest } = o as Record<string, unknown>;
  return RULES[kind] === 'spec' ? (o as { spec?: unknown }).spec : rest;
}

/** On create: 1 for kinds that have a generation; what the client sent stays for others, as upstream stores it. */
export function setCreateGeneration(kind: Kind, o: AnyObject): void {
  if (hasGeneration(kind)) o.metadata!.generation = 1;
}

/** On update: clients cannot set it (BeforeUpdate copies the old one); a change to what the kind tracks adds 1. */
export function setUpdateGeneration(kind: Kind, next: AnyObject, old: AnyObject): void {
  const before = old.metadata?.generation;
  if (before === undefined) delete next.metadata!.generation;
  else next.metadata!.generation = before;
  if (!hasGeneration(kind)) return;
  if (canonicalJson(tracked(kind, next)) !== canonicalJson(tracked(kind, old))) next.metadata!.generation = (before ?? 0) + 1;
}

/** The first deletionTimestamp changes what controllers may do, so a generation that is set moves (rest.BeforeDelete, the store's markAsDeleting). */
export function bumpOnDeletion(o: AnyObject): void {
  const g = o.metadata?.generation;
  if (g !== undefined && g > 0) o.metadata!.generation = g + 1;
}
