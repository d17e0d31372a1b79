// All-or-nothing provisioning for pods with several claims: a CreateVolume reserves the space of the pod's other claims on this node, or is refused before anything is made.
import { status } from '@grpc/grpc-js';
import { CsiError } from '../../rpc/errors.js';
import type { KubeClient } from '../../../kube/kube-client.js';
import { describeApiError, isNotFound } from '../../../kube/kube-errors.js';
import { PoolFullError } from '../../../pool/space-errors.js';
import type { HoldStep } from '../../../catalog/space-ledger.js';
import type { VolumeCatalog } from '../../../catalog/volume-catalog.js';
import { humanBytes } from '../../../util/quantity.js';
import { log } from '../../../util/log.js';
import { podNeeds, type ClaimNeed, type PodNeeds } from './pod-claims.js';
import { ReservationBook, type NewReservation, type Reservation } from './reservation-book.js';

/** What csi-provisioner --extra-create-metadata adds to CreateVolume's parameters. */
export const PVC_NAME_KEY = 'csi.storage.k8s.io/pvc/name';
export const PVC_NAMESPACE_KEY = 'csi.storage.k8s.io/pvc/namespace';

/** Default lifetime of a reservation; docs/api-access.md says why it is this long. */
export const DEFAULT_RESERVATION_TTL_MS = 120_000;

/** Pods checked when reservations stand in a create's way: a bound on the API requests one call makes. */
const PRUNE_POD_LIMIT = 10;

/** RESOURCE_EXHAUSTED: the pod's claims do not all fit here, so none is made; the scheduler tries again. */
export class PodDoesNotFitError extends CsiError {
  constructor(message: string, readonly pools: readonly string[]) {
    super(status.RESOURCE_EXHAUSTED, message);
    this.name = 'PodDoesNotFitError';
  }
}

/** The volume the CreateVolume itself makes, sized and placed already. */
export interface OwnVolume {
  pool: string;
  bytes: number;
}

export interface ReservationScope {
  nodeId: string;
  driverName: string;
}

export class PodReservations {
  /** `book` is the one the catalog was opened with, so every create, growth and capacity counts its holds. */
  constructor(private readonly kube: KubeClient, private readonly scope: ReservationScope, private readonly catalog: VolumeCatalog, readonly book: ReservationBook) {}

  /**
   * The step a CreateVolume takes with its own space check, or undefined when the request
   * names no claim (no --extra-create-metadata, a static volume): then nothing changes. An API
   * that fails or does not answer in time leaves the volume to be made alone, as upstream does.
   */
  async prepare(parameters: Record<string, string>, own: OwnVolume): Promise<HoldStep | undefined> {
    const claimName = parameters[PVC_NAME_KEY];
    const namespace = parameters[PVC_NAMESPACE_KEY];
    if (!claimName || !namespace) return undefined;
    const key = `${namespace}/${claimName}`;
    let pods: PodNeeds[] = [];
    try {
      pods = await this.kube.bounded(`pods using claim ${key}`, (apis) => podNeeds(apis, {
        nodeId: this.scope.nodeId, driverName: this.scope.driverName, catalog: this.catalog, madeHere: (claim) => this.madeHere(claim),
        holds: (id) => this.holdsVolume(id),
      }, namespace, claimName));
    } catch (err) {
      log('warn', 'pod reservations: cannot read the pods using this claim; creating its volume alone, as without API access', { claim: key, error: describeApiError(err, `pods using claim ${key}`) });
    }
    const needs = new Map<string, { need: ClaimNeed; pod: PodNeeds }>();
    for (const p of pods) for (const n of p.needs) if (!needs.has(n.claim)) needs.set(n.claim, { need: n, pod: p });
    return {
      keys: new Set([key, ...needs.keys()]),
      take: (free) => this.take(key, claimName, own, pods, [...needs.values()], free),
    };
  }

  /** Checks the whole set and takes it; synchronous, so no other create comes between check and hold. */
  private take(key: string, claimName: string, own: OwnVolume, pods: PodNeeds[], looked: { need: ClaimNeed; pod: PodNeeds }[], free: (pool: string) => number): void {
    // A sibling whose own create ran while this one read the API has its volume now, not a need.
    const needs = looked.filter((n) => !this.madeHere(n.need.claim));
    const split = pods.filter((p) => p.elsewhere.length > 0);
    if (split.length > 0) {
      const message = split.map((p) => `pod ${p.pod} has ${p.elsewhere.join(', ')} on another node already; ${claimName} cannot join ${p.elsewhere.length === 1 ? 'it' : 'them'} on node ${this.scope.nodeId}`).join('; ');
      log('warn', 'pod reservations: refused, the pod\'s other volumes are on another node', { claim: key, message });
      throw new PodDoesNotFitError(message, []);
    }
    if (needs.length > 0) {
      const problems: string[] = [];
      const failing: string[] = [];
      const missing = needs.filter((n) => n.need.missing);
      for (const m of missing) problems.push(`claim ${m.need.name} needs pool ${m.need.pool}, which node ${this.scope.nodeId} does not have`);
      const pools = [...new Set([own.pool, ...needs.filter((n) => !n.need.missing).map((n) => n.need.pool)])];
      const steer: NewReservation[] = [];
      const released: string[] = [];
      for (const pool of pools) {
        const first = needs[0]!.pod;
        const parts = [
          ...(own.pool === pool ? [{ claim: key, name: claimName, bytes: own.bytes, pod: first }] : []),
          ...needs.filter((n) => !n.need.missing && n.need.pool === pool).map((n) => ({ ...n.need, pod: n.pod })),
        ];
        const total = parts.reduce((s, p) => s + p.bytes, 0);
        const available = free(pool);
        if (total <= available) continue;
        failing.push(pool);
        // The scheduler checks each claim against the published capacity alone, so a refusal by
        // itself would see the same node chosen again. Holding all of the pod's claims but its
        // largest back from the reported capacity makes that one look too big for this node
        // (free - (total - largest) < largest exactly when total > free): the pod is sent
        // elsewhere. Only GetCapacity sees these holds, so no create is refused for them; the
        // same claims are held on every refusal of this pod, so repeats do not add up.
        const ordered = [...parts].sort((a, b) => b.bytes - a.bytes || a.name.localeCompare(b.name));
        for (const p of ordered) released.push(p.claim);
        for (const p of ordered.slice(1)) steer.push({ claim: p.claim, pod: p.pod.pod, podUid: p.pod.podUid, pool, bytes: p.bytes, kind: 'steer' });
        const others = this.book.heldBytes(pool, new Set([key, ...needs.map((n) => n.need.claim)]));
        const held = others > 0 ? ` (besides ${humanBytes(others)} held for other pods' claims)` : '';
        problems.push(`needs ${parts.map((p) => `${humanBytes(p.bytes)} (${p.name})`).join(' + ')} = ${humanBytes(total)} on node ${this.scope.nodeId}; pool ${pool} has ${humanBytes(available)} free${held}`);
      }
      if (problems.length > 0) {
        for (const c of released) this.book.release(c);
        this.book.hold(steer);
        const who = [...new Set(needs.map((n) => n.pod.pod))];
        const message = `${who.length === 1 ? 'pod' : 'pods'} ${who.join(', ')} ${problems.join('; ')}`;
        log('warn', 'pod reservations: refused, the pod\'s claims do not all fit', { claim: key, message });
        throw new PodDoesNotFitError(message, [...failing, ...missing.map((m) => m.need.pool)]);
      }
    }
    this.book.release(key);
    const reservations: NewReservation[] = needs.filter((n) => !n.need.missing).map((n) => ({ claim: n.need.claim, pod: n.pod.pod, podUid: n.pod.podUid, pool: n.need.pool, bytes: n.need.bytes, kind: 'claim' }));
    if (reservations.length > 0) {
      this.book.hold(reservations);
      log('info', 'pod reservations: space held for the pod\'s other claims', { claim: key, pods: pods.map((p) => p.pod), held: reservations.map((r) => `${r.claim}=${humanBytes(r.bytes)}@${r.pool}`) });
    }
  }

  /**
   * When a create was refused and reservations of other pods held space in the pools it needed:
   * asks the API (bounded) whether those pods still wait for this node, and drops the
   * reservations of any that is gone or went to another node. True when some were dropped, so
   * the create is worth trying again.
   */
  async pruneFor(err: unknown, own: ReadonlySet<string>): Promise<boolean> {
    const pools = err instanceof PodDoesNotFitError ? err.pools : err instanceof PoolFullError ? [err.pool] : [];
    if (pools.length === 0) return false;
    return this.prune((r) => r.kind === 'claim' && pools.includes(r.pool) && !own.has(r.claim));
  }

  /**
   * Before GetCapacity answers: reservations of pods that no longer wait for this node are
   * dropped first, so the capacity the scheduler sees is not held back for them (bounded;
   * nothing is asked when nothing is held).
   */
  async pruneBeforeCapacity(pool: string): Promise<void> {
    await this.prune((r) => r.pool === pool);
  }

  /** The pool's free space as GetCapacity reports it: less what creates may not take, and less what refused pods are steered away by. */
  reportedFree(pool: string): number {
    return Math.max(0, this.catalog.availableBytes(pool) - this.book.steeringBytes(pool));
  }

  private async prune(which: (r: Reservation) => boolean): Promise<boolean> {
    const pods = new Map<string, string>();
    for (const r of this.book.live()) {
      if (which(r) && pods.size < PRUNE_POD_LIMIT) pods.set(`${r.pod} ${r.podUid}`, r.pod);
    }
    if (pods.size === 0) return false;
    let dropped = 0;
    try {
      await this.kube.bounded('pods holding reservations', async (apis) => {
        for (const [k, pod] of pods) {
          const uid = k.slice(pod.length + 1);
          const [namespace, name] = pod.split('/') as [string, string];
          let gone = false;
          try {
            const p = await apis.core.readNamespacedPod({ namespace, name });
            gone = p.metadata?.uid !== uid || p.metadata?.deletionTimestamp !== undefined || (Boolean(p.spec?.nodeName) && p.spec?.nodeName !== this.scope.nodeId);
          } catch (e) {
            if (!isNotFound(e)) throw e;
            gone = true;
          }
          if (gone) {
            const n = this.book.releasePod(pod, uid);
            dropped += n;
            log('info', 'pod reservations: dropped, the pod no longer waits for this node', { pod, reservations: n });
          }
        }
      });
    } catch (e) {
      log('warn', 'pod reservations: cannot check the pods holding space; their reservations stand until they lapse', { error: describeApiError(e, 'pods holding reservations') });
    }
    return dropped > 0;
  }

  private holdsVolume(id: string): boolean {
    try {
      return this.catalog.get(id) !== undefined;
    } catch {
      return true; // quarantined here: it is this node's, whatever state it is in
    }
  }

  /** Whether this node already made the claim's volume: its record keeps the claim the create named. */
  private madeHere(claim: string): boolean {
    return this.catalog.list().some((r) => `${r.parameters[PVC_NAMESPACE_KEY]}/${r.parameters[PVC_NAME_KEY]}` === claim);
  }
}
