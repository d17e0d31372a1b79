// The leader's look at waiting claims: one Warning Event per claim whose class's pool is on no node or whose size is below its filesystem's minimum, written once.
import { createHash } from 'node:crypto';
import type { V1PersistentVolume } from '@kubernetes/client-node';
import { eventBody } from '../../../kube/event-body.js';
import type { KubeClient } from '../../../kube/kube-client.js';
import { describeApiError, isConflict } from '../../../kube/kube-errors.js';
import { log } from '../../../util/log.js';
import { CAPACITY_DRIVER_LABEL } from '../node-loss/lost-nodes.js';
import { claimReasons, waitingClaims, type ClaimReason } from './claim-reasons.js';

export interface ClaimReasonScope {
  driverName: string;
  nodeId: string;
  topologyKey: string;
  /** The driver's namespace, where csi-provisioner keeps the capacity objects. */
  namespace: string;
  /** This node's pool names. */
  ownPools: () => readonly string[];
}

/** The longest Event name the API takes (a DNS subdomain). */
const MAX_NAME = 253;

/**
 * The Event's name follows from the claim's uid and the reason, so a second leader (after a
 * failover or a restart) that finds the claim waiting gets a 409 for the same Event instead of
 * writing another: one Event per claim and reason for the whole cluster.
 */
export function claimEventName(claimName: string, uid: string, reason: string): string {
  const hash = createHash('sha256').update(`${uid}\0${reason}`).digest('hex').slice(0, 16);
  return `${claimName.slice(0, MAX_NAME - hash.length - 1)}.${hash}`;
}

/**
 * One look per leader pass. Its steady cost is one list of claims (from the API server's
 * cache); classes and capacity objects are read only while a waiting claim has not been looked
 * at yet, and the PVs only when a pool seems to be on no node (a PV of it proves it somewhere).
 */
export class ClaimReasonEvents {
  /** The claims (by uid) given an Event, or found with a reason already written by an earlier leader. */
  private readonly reported = new Set<string>();
  /** The claims (by uid) already looked at with no reason found, and the capacity objects' state then. */
  private readonly clear = new Map<string, string>();
  passes = 0;

  constructor(private readonly kube: KubeClient, private readonly scope: ClaimReasonScope) {}

  /** Looks once; the Events it wrote. Never throws for one Event the API refuses (the next pass tries again). */
  async pass(stopped: AbortSignal): Promise<ClaimReason[]> {
    this.passes++;
    const { driverName, namespace } = this.scope;
    const claims = (await this.kube.bounded('list persistentvolumeclaims', (a) => a.core.listPersistentVolumeClaimForAllNamespaces({ resourceVersion: '0' }))).items;
    const live = new Set(claims.map((c) => c.metadata?.uid ?? ''));
    for (const uid of this.reported) if (!live.has(uid)) this.reported.delete(uid);
    for (const uid of this.clear.keys()) if (!live.has(uid)) this.clear.delete(uid);
    // Pending claims of a class not yet known are checked against the classes read below.
    const pending = claims.filter((c) => !this.reported.has(c.metadata?.uid ?? '') && (c.status?.phase ?? 'Pending') === 'Pending' && (c.spec?.volumeName ?? '') === '' && (c.spec?.storageClassName ?? '') !== '');
    if (pending.length === 0 || stopped.aborted) return [];
    const classes = (await this.kube.bounded('list storageclasses', (a) => a.storage.listStorageClass({ resourceVersion: '0' }))).items.filter((c) => c.provisioner === driverName);
    const waiting = waitingClaims(pending, classes, driverName);
    if (waiting.length === 0) return [];
    const capacities = (await this.kube.bounded('list csistoragecapacities', (a) => a.storage.listNamespacedCSIStorageCapacity({ namespace, labelSelector: `${CAPACITY_DRIVER_LABEL}=${driverName}`, resourceVersion: '0' }))).items;
    // A claim found clear stays clear until the capacity objects change (csi-provisioner rewrites them as space moves).
    const state = capacities.map((c) => `${c.metadata?.name ?? ''}=${c.metadata?.resourceVersion ?? ''}`).sort().join(',');
    const fresh = waiting.filter((w) => this.clear.get(w.claim.metadata?.uid ?? '') !== state);
    if (fresh.length === 0) return [];
    const inputs = { driverName, topologyKey: this.scope.topologyKey, waiting: fresh, capacities, classes, pvs: [] as V1PersistentVolume[], ownNode: this.scope.nodeId, ownPools: this.scope.ownPools() };
    let reasons = claimReasons(inputs);
    if (reasons.some((r) => r.reason === 'PoolNotOnAnyNode')) {
      const pvs = (await this.kube.bounded('list persistentvolumes', (a) => a.core.listPersistentVolume({ resourceVersion: '0' }))).items;
      reasons = claimReasons({ ...inputs, pvs });
    }
    const found = new Set(reasons.map((r) => r.claim.metadata?.uid ?? ''));
    for (const w of fresh) {
      const uid = w.claim.metadata?.uid ?? '';
      if (!found.has(uid)) this.clear.set(uid, state);
    }
    const written: ClaimReason[] = [];
    for (const r of reasons) {
      if (stopped.aborted) break;
      const outcome = await this.write(r);
      if (outcome !== 'failed') {
        this.reported.add(r.claim.metadata?.uid ?? '');
        this.clear.delete(r.claim.metadata?.uid ?? '');
      }
      if (outcome === 'written') written.push(r);
    }
    return written;
  }

  private async write(r: ClaimReason): Promise<'written' | 'there' | 'failed'> {
    const meta = r.claim.metadata ?? {};
    const name = meta.name ?? '';
    const claimNamespace = meta.namespace ?? '';
    const uid = meta.uid ?? '';
    const body = eventBody({
      name: claimEventName(name, uid, r.reason),
      about: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', name, namespace: claimNamespace, uid },
      type: 'Warning', reason: r.reason, message: r.message,
      component: `${this.scope.driverName}/claim-reasons`, host: this.scope.nodeId, at: new Date(),
    });
    try {
      await this.kube.bounded(`create event for claim ${claimNamespace}/${name}`, (a) => a.core.createNamespacedEvent({ namespace: claimNamespace, body }));
      log('info', 'claim reasons: a claim can be made on no node', { claim: `${claimNamespace}/${name}`, reason: r.reason, message: r.message });
      return 'written';
    } catch (err) {
      // Written by an earlier leader: the claim has its Event.
      if (isConflict(err)) return 'there';
      log('warn', 'claim reasons: could not record an event; the next pass tries again', { claim: `${claimNamespace}/${name}`, reason: r.reason, error: describeApiError(err, 'create event') });
      return 'failed';
    }
  }
}
