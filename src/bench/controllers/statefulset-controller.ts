// The StatefulSet controller: ordinal pods `<sts>-<i>`, claims `<template>-<sts>-<i>` kept or removed per the retention policy, OrderedReady or Parallel.
import type { V1PersistentVolumeClaim, V1Pod, V1StatefulSet } from '@kubernetes/client-node';
import { Controller } from '../runtime/controller.js';
import type { BenchContext } from '../runtime/context.js';
import { objectKey, splitKey } from '../api/kinds.js';
import { retentionOwners, sameOwners } from './claim-retention.js';
import { applyDefaultStorageClass } from '../api/default-storage-class.js';
import { canonicalJson } from '../api/canonical-json.js';
import { podRevision, REVISION_LABEL, templateRevision } from './statefulset-revision.js';

const SOURCE = 'statefulset-controller';

/**
 * Upstream's isRunningAndReady: Running, not being deleted, and its Ready condition not False
 * (a pod on a node the node lifecycle found silent is Running but not Ready). What the
 * ready and available counts count and what a rolling update waits for.
 */
function runningAndReady(p: V1Pod): boolean {
  if (p.status?.phase !== 'Running' || p.metadata?.deletionTimestamp) return false;
  return (p.status.conditions ?? []).find((c) => c.type === 'Ready')?.status !== 'False';
}

export class StatefulSetController extends Controller {
  constructor(private readonly ctx: BenchContext) {
    super('statefulset-controller', ctx.clock);
    ctx.store.watch('StatefulSet', (e) => {
      if (e.type !== 'DELETED') this.enqueue(objectKey(e.object));
    });
    ctx.store.watch('Pod', (e) => {
      const owner = (e.object.metadata?.ownerReferences ?? []).find((r) => r.kind === 'StatefulSet' && r.controller);
      if (owner) this.enqueue(`${e.object.metadata?.namespace}/${owner.name}`);
    });
  }

  async reconcile(key: string): Promise<void> {
    const { namespace, name } = splitKey(key);
    const sts = this.ctx.store.get('StatefulSet', name, namespace);
    if (sts === undefined || sts.metadata?.deletionTimestamp) return;
    const replicas = sts.spec?.replicas ?? 1;
    const ordered = (sts.spec?.podManagementPolicy ?? 'OrderedReady') === 'OrderedReady';
    const pods = this.ctx.store.list('Pod', namespace).filter((p) => (p.metadata?.ownerReferences ?? []).some((r) => r.uid === sts.metadata?.uid && r.controller));
    const byOrdinal = new Map<number, V1Pod>();
    for (const p of pods) {
      const ord = Number((p.metadata?.name ?? '').slice(name.length + 1));
      if (Number.isInteger(ord)) byOrdinal.set(ord, p);
    }
    // Claims follow the retention policy before any pod goes, so a condemned pod's claim leaves with it.
    for (const [ord, p] of byOrdinal) this.updateClaimOwners(sts, p, ord);
    // Scale down: highest ordinal first; OrderedReady waits for each pod to be gone.
    const extra = [...byOrdinal.keys()].filter((o) => o >= replicas).sort((a, b) => b - a);
    for (const ord of extra) {
      const p = byOrdinal.get(ord)!;
      if (!p.metadata?.deletionTimestamp) {
        this.ctx.store.delete('Pod', p.metadata?.name ?? '', namespace, Boolean(p.spec?.nodeName));
        this.ctx.events.record(SOURCE, sts, 'Normal', 'SuccessfulDelete', `delete Pod ${p.metadata?.name} in StatefulSet ${name} successful`);
      }
      if (ordered) break;
    }
    if (ordered && extra.length > 0) {
      // Upstream writes status on every sync: the scale-down is observed while it runs.
      this.writeStatus(sts, pods);
      return;
    }
    for (let ord = 0; ord < replicas; ord++) {
      const existing = byOrdinal.get(ord);
      if (existing !== undefined) {
        // A Pending pod whose claim went away (deleted by someone else) gets it back, as upstream's createMissingPersistentVolumeClaims does.
        if ((existing.status?.phase ?? 'Pending') === 'Pending' && !existing.metadata?.deletionTimestamp) this.createClaims(sts, existing.metadata?.name ?? '');
        if (ordered && (existing.status?.phase !== 'Running' || existing.metadata?.deletionTimestamp)) break;
        continue;
      }
      this.createPod(sts, ord);
      if (ordered) break;
    }
    this.rollingUpdate(sts, byOrdinal);
    this.writeStatus(sts, pods);
  }

  /**
   * RollingUpdate: once every replica exists and runs, the highest ordinal at or above the
   * partition whose pod was made from an older template is deleted; the next pass makes
   * it again from the current one. One pod at a time, as upstream's default maxUnavailable 1.
   */
  private rollingUpdate(sts: V1StatefulSet, byOrdinal: Map<number, V1Pod>): void {
    const strategy = sts.spec?.updateStrategy;
    if ((strategy?.type ?? 'RollingUpdate') !== 'RollingUpdate') return;
    const replicas = sts.spec?.replicas ?? 1;
    const partition = strategy?.rollingUpdate?.partition ?? 0;
    const update = templateRevision(sts);
    for (let ord = 0; ord < replicas; ord++) {
      const p = byOrdinal.get(ord);
      if (p === undefined || !runningAndReady(p)) return;
    }
    for (let ord = replicas - 1; ord >= partition; ord--) {
      const p = byOrdinal.get(ord)!;
      if (podRevision(p) === update) continue;
      const podName = p.metadata?.name ?? '';
      this.ctx.store.delete('Pod', podName, p.metadata?.namespace, Boolean(p.spec?.nodeName));
      this.ctx.events.record(SOURCE, sts, 'Normal', 'SuccessfulDelete', `delete Pod ${podName} in StatefulSet ${sts.metadata?.name} successful`);
      return;
    }
  }

  /** The status upstream's controller writes: counts, the revisions, and the generation it acted on (what `kubectl rollout status` reads). */
  private writeStatus(sts: V1StatefulSet, pods: V1Pod[]): void {
    const live = pods.filter((p) => !p.metadata?.deletionTimestamp);
    const running = live.filter(runningAndReady).length;
    const update = templateRevision(sts);
    const updated = live.filter((p) => podRevision(p) === update).length;
    this.ctx.store.modify('StatefulSet', sts.metadata?.name ?? '', sts.metadata?.namespace, (o) => {
      // The current revision becomes the update revision when every replica runs it (completeRollingUpdate).
      let current = o.status?.currentRevision ?? update;
      if (updated === pods.length && running === pods.length) current = update;
      const status = {
        ...(o.status ?? { replicas: 0 }),
        observedGeneration: sts.metadata?.generation,
        replicas: pods.length, readyReplicas: running, availableReplicas: running,
        currentReplicas: live.filter((p) => podRevision(p) === current).length, updatedReplicas: updated,
        currentRevision: current, updateRevision: update, collisionCount: o.status?.collisionCount ?? 0,
      };
      if (canonicalJson(status) === canonicalJson(o.status)) return false;
      o.status = status;
      return true;
    });
  }

  private updateClaimOwners(sts: V1StatefulSet, pod: V1Pod, ord: number): void {
    const namespace = sts.metadata?.namespace ?? 'default';
    for (const t of sts.spec?.volumeClaimTemplates ?? []) {
      const claimName = `${t.metadata?.name ?? ''}-${pod.metadata?.name ?? ''}`;
      const claim = this.ctx.store.get('PersistentVolumeClaim', claimName, namespace);
      if (claim === undefined || claim.metadata?.deletionTimestamp) continue;
      const owners = retentionOwners(sts, claim, pod, ord);
      if (sameOwners(claim.metadata?.ownerReferences, owners)) continue;
      this.ctx.store.modify('PersistentVolumeClaim', claimName, namespace, (o) => {
        o.metadata!.ownerReferences = owners.length > 0 ? owners : undefined;
      });
    }
  }

  /** Creates the claims of pod `podName` that do not exist (one per volumeClaimTemplate). */
  private createClaims(sts: V1StatefulSet, podName: string): void {
    const name = sts.metadata?.name ?? '';
    const namespace = sts.metadata?.namespace ?? 'default';
    const ord = Number(podName.slice(name.length + 1));
    for (const t of sts.spec?.volumeClaimTemplates ?? []) {
      const claimName = `${t.metadata?.name ?? ''}-${podName}`;
      if (this.ctx.store.get('PersistentVolumeClaim', claimName, namespace) !== undefined) continue;
      // Retain (the default) leaves the claim without owners: it outlives the pod and the set.
      const claim: V1PersistentVolumeClaim = {
        apiVersion: 'v1', kind: 'PersistentVolumeClaim',
        metadata: { name: claimName, namespace, labels: { ...(sts.spec?.selector?.matchLabels ?? {}), ...(t.metadata?.labels ?? {}) }, annotations: { ...(t.metadata?.annotations ?? {}) } },
        spec: structuredClone(t.spec),
      };
      // The claim is created through the API server upstream, so its admission applies.
      applyDefaultStorageClass(claim, this.ctx.store.list('StorageClass'));
      const owners = retentionOwners(sts, claim, undefined, ord);
      this.ctx.store.create('PersistentVolumeClaim', owners.length > 0 ? { ...claim, metadata: { ...claim.metadata, ownerReferences: owners } } : claim);
      this.ctx.events.record(SOURCE, sts, 'Normal', 'SuccessfulCreate', `create Claim ${claimName} Pod ${podName} in StatefulSet ${name} success`);
    }
  }

  private createPod(sts: V1StatefulSet, ord: number): void {
    const name = sts.metadata?.name ?? '';
    const namespace = sts.metadata?.namespace ?? 'default';
    const podName = `${name}-${ord}`;
    const volumes = [...(sts.spec?.template.spec?.volumes ?? [])];
    this.createClaims(sts, podName);
    for (const t of sts.spec?.volumeClaimTemplates ?? []) {
      const tName = t.metadata?.name ?? '';
      const claimName = `${tName}-${podName}`;
      const i = volumes.findIndex((v) => v.name === tName);
      const vol = { name: tName, persistentVolumeClaim: { claimName } };
      if (i >= 0) volumes[i] = vol;
      else volumes.push(vol);
    }
    const tmpl = sts.spec?.template;
    this.ctx.store.create('Pod', {
      apiVersion: 'v1', kind: 'Pod',
      metadata: {
        name: podName, namespace,
        labels: { ...(tmpl?.metadata?.labels ?? {}), [REVISION_LABEL]: templateRevision(sts), 'statefulset.kubernetes.io/pod-name': podName, 'apps.kubernetes.io/pod-index': String(ord) },
        annotations: { ...(tmpl?.metadata?.annotations ?? {}) },
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name, uid: sts.metadata?.uid ?? '', controller: true, blockOwnerDeletion: true }],
      },
      spec: { ...structuredClone(tmpl?.spec ?? { containers: [] }), volumes, hostname: podName, subdomain: sts.spec?.serviceName },
    });
    this.ctx.events.record(SOURCE, sts, 'Normal', 'SuccessfulCreate', `create Pod ${podName} in StatefulSet ${name} successful`);
  }
}
