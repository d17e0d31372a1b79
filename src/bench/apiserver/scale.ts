// The scale subresource of StatefulSets (autoscaling/v1 Scale), which kubectl scale reads and patches.
import type { V1StatefulSet } from '@kubernetes/client-node';
import type { ResourceType } from '../api/resources.js';
import { applyPatch } from './patch/apply-patch.js';
import { isPlainObject } from './patch/merge-patch.js';
import { badRequest, conflict, invalid, notFound } from './status.js';
import { toJson } from './wire.js';
import { writeOrder, type WriteBackend, type WriteTarget } from './writes.js';

/** Kinds with a scale subresource: the one scalable kind the bench models. */
export function hasScale(r: ResourceType): boolean {
  return r.kind === 'StatefulSet';
}

export interface Scale {
  apiVersion: 'autoscaling/v1';
  kind: 'Scale';
  metadata: { name?: string; namespace?: string; uid?: string; resourceVersion?: string; creationTimestamp?: unknown };
  spec: { replicas: number };
  status: { replicas: number; selector?: string };
}

function selectorText(sts: V1StatefulSet): string | undefined {
  const ml = sts.spec?.selector?.matchLabels;
  return ml === undefined ? undefined : Object.entries(ml).map(([k, v]) => `${k}=${v}`).join(',');
}

export function scaleOf(sts: V1StatefulSet): Scale {
  const m = sts.metadata ?? {};
  const selector = selectorText(sts);
  return {
    apiVersion: 'autoscaling/v1', kind: 'Scale',
    metadata: { name: m.name, namespace: m.namespace, uid: m.uid, resourceVersion: m.resourceVersion, creationTimestamp: m.creationTimestamp },
    spec: { replicas: sts.spec?.replicas ?? 1 },
    status: { replicas: sts.status?.replicas ?? 0, ...(selector ? { selector } : {}) },
  };
}

export function getScale(b: WriteBackend, t: WriteTarget): Scale {
  const sts = b.store.get('StatefulSet', t.name ?? '', t.namespace);
  if (sts === undefined) throw notFound(t.r, t.name ?? '');
  return scaleOf(sts);
}

/** PUT (a Scale body) or PATCH (a patch of the Scale): only spec.replicas is taken, with the Scale's resourceVersion as a precondition. */
export async function writeScale(b: WriteBackend, t: WriteTarget, body: { put: unknown } | { patch: string; contentType: string }): Promise<Scale> {
  const name = t.name ?? '';
  return b.external.submit('scale statefulsets', () => {
    const sts = b.store.get('StatefulSet', name, t.namespace);
    if (sts === undefined) throw notFound(t.r, name);
    const current = toJson(scaleOf(sts), t.displayShiftMs);
    const next = 'put' in body ? body.put : applyPatch(t.r, body.contentType === 'application/strategic-merge-patch+json' ? 'application/merge-patch+json' : body.contentType, current, body.patch);
    if (!isPlainObject(next)) throw badRequest('a Scale is a JSON object');
    const meta = (next.metadata ?? {}) as { resourceVersion?: string };
    if (meta.resourceVersion !== undefined && meta.resourceVersion !== '' && meta.resourceVersion !== sts.metadata?.resourceVersion) throw conflict(t.r, name);
    const replicas = (next.spec as { replicas?: unknown } | undefined)?.replicas;
    if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0) {
      throw invalid(t.r, name, [{ field: 'spec.replicas', type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(replicas)}: must be greater than or equal to 0` }]);
    }
    if (replicas === (sts.spec?.replicas ?? 1)) return scaleOf(sts);
    const written = b.store.modify('StatefulSet', name, t.namespace, (o) => { o.spec!.replicas = replicas; })!;
    b.events.record(`api/${t.client}`, { kind: 'StatefulSet', metadata: { name, ...(t.namespace ? { namespace: t.namespace } : {}) } }, 'Normal', 'ApiWrite', `scale statefulsets/scale ${t.namespace}/${name} to ${replicas} by ${t.client}`);
    return scaleOf(written);
  }, writeOrder(t, 'scale', name));
}
