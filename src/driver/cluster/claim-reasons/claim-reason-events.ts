// The leader's look at waiting claims: one Warning Event per claim whose class's pool is on no node or whose size is below its filesystem's minimum, written once.
import { createHash } from 'node:crypto';
import type { V1CSIStorageCapacity, V1PersistentVolume } from '@kubernetes/client-node';
import { eventBody } from '../../../kube/event-body.js';
import type { KubeClient } from '../../../kube/kube-client.js';
import { describeApiError, isConflict } from '../../../kube/kube-errors.js';
import { log } from '../../../util/log.js';
import { untilSynced } from '../../../kube/watch-timing.js';
import { ClaimReasonInformers } from './claim-reason-informers.js';
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

/** What the node-loss leader's caches lend the look: this driver's PVs and capacity objects. */
export interface SharedCaches {
  readonly synced: boolean;
  pvs(): V1PersistentVolume[];
  capacities(): V1CSIStorageCapacity[];
}

/**
 * One look per leader pass, at caches only: the waiting claims and the driver's classes (its
 * own, for the leader's term), the PVs and capacity objects (the node-loss handler's). A pass
 * sends no request but the Events it writes.
 */
export class ClaimReasonEvents {
  /** The claims (by uid) given an Event, or found with a reason already written by an earlier leader. */
  private readonly reported = new Set<string>();
  /** The claims (by uid) already looked at with no reason found, and the capacity objects' state then. */
  private readonly clear = new Map<string, string>();
  private caches: ClaimReasonInformers | undefined;
  passes = 0;

  constructor(private readonly kube: KubeClient, private readonly scope: ClaimReasonScope) {}

  /** Ends the term's caches (leadership lost, or the driver stopping); the next pass starts new ones. */
  async endTerm(): Promise<void> {
    const c = this.caches;
    this.caches = undefined;
    await c?.stop();
  }

  /** Looks once; the Events it wrote. Never throws for one Event the API refuses (the next pass tries again). */
  async pass(stopped: AbortSignal, shared: SharedCaches): Promise<ClaimReason[]> {
    this.passes++;
    const { driverName } = this.scope;
    if (this.caches === undefined) {
      this.caches = new ClaimReasonInformers(this.kube, driverName);
      this.caches.start();
    }
    const caches = this.caches;
    await untilSynced(caches.whenSynced(), stopped);
    // A cache not whole (a list after a 410, or the first one failing) gives no look.
    if (stopped.aborted || !caches.synced || !shared.synced) return [];
    // The cache holds waiting claims only; a claim not in it no longer waits.
    const claims = caches.claims.values();
    const live = new Set(claims.map((c) => c.metadata?.uid ?? ''));
    for (const uid of this.reported) if (!live.has(uid)) this.reported.delete(uid);
    for (const uid of this.clear.keys()) if (!live.has(uid)) this.clear.delete(uid);
    const pending = claims.filter((c) => !this.reported.has(c.metadata?.uid ?? ''));
    if (pending.length === 0) return [];
    const classes = caches.classes.values();
    const waiting = waitingClaims(pending, classes, driverName);
    if (waiting.length === 0) return [];
    const capacities = shared.capacities();
    // A claim found clear stays clear until the capacity objects change (csi-provisioner rewrites them as space moves).
    const state = capacities.map((c) => `${c.metadata?.name ?? ''}=${c.metadata?.resourceVersion ?? ''}`).sort().join(',');
    const fresh = waiting.filter((w) => this.clear.get(w.claim.metadata?.uid ?? '') !== state);
    if (fresh.length === 0) return [];
    const reasons = claimReasons({ driverName, topologyKey: this.scope.topologyKey, waiting: fresh, capacities, classes, pvs: shared.pvs(), ownNode: this.scope.nodeId, ownPools: this.scope.ownPools() });
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
