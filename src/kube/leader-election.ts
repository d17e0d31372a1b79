// Leader election over a coordination.k8s.io/v1 Lease: one of many candidates holds it, renews it, and hands it over when it stops.
import { pause, watchTimeoutSeconds } from './watch-timing.js';
import type { V1Lease } from '@kubernetes/client-node';
import { log } from '../util/log.js';
import type { KubeClient } from './kube-client.js';
import { describeApiError, isConflict, isNotFound } from './kube-errors.js';

export interface LeaseTimings {
  /** How long a lease nobody renews blocks other candidates (whole seconds: the Lease stores seconds). */
  leaseDurationSeconds: number;
  /** A leader that has not renewed for this long steps down: shorter than the lease, so it stops acting before anyone may take over. */
  renewDeadlineMs: number;
  /** Pause between attempts to acquire, and between renewals. */
  retryPeriodMs: number;
}

/** client-go's defaults for the same three settings. */
export const DEFAULT_LEASE_TIMINGS: LeaseTimings = { leaseDurationSeconds: 15, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 };

/** Why a set of timings cannot work, or undefined. */
export function leaseTimingsProblem(t: LeaseTimings): string | undefined {
  if (t.renewDeadlineMs >= t.leaseDurationSeconds * 1000) return 'the renew deadline must be shorter than the lease duration';
  // As client-go asks: room for a renewal attempt or two within the deadline.
  if (t.retryPeriodMs * 1.2 >= t.renewDeadlineMs) return 'the retry period (times 1.2) must be shorter than the renew deadline';
  return undefined;
}

/** A Date that serialises with microseconds, as the Lease's MicroTime fields are written upstream. */
class MicroTime extends Date {
  override toISOString(): string {
    return `${super.toISOString().slice(0, -1)}000Z`;
  }
}

export interface LeaseElectorOptions {
  namespace: string;
  name: string;
  /** This candidate's holderIdentity: the node name, so `kubectl get lease` says which node leads. */
  identity: string;
  timings: LeaseTimings;
  /** Called when this candidate becomes leader; the signal aborts when it stops being one. */
  onLeading: (stopped: AbortSignal) => void;
}

/**
 * One candidate. Expiry is judged on this process's own clock from when it last saw the
 * lease change (as client-go does), never from the renewTime written by another node, so
 * clock skew between nodes cannot make a live leader's lease look expired. Every write
 * carries the resourceVersion it was based on: of two candidates racing, the second gets a
 * 409 and stays a follower.
 */
export class LeaseElector {
  private observed: { key: string; atMs: number } | undefined;
  /** The lease as last read while another candidate held it: where a follower's watch starts. */
  private seen: V1Lease | undefined;
  /** The lease as this candidate last wrote it, while it leads: renewals update it directly. */
  private held: V1Lease | undefined;
  private leading: AbortController | undefined;
  private readonly stop = new AbortController();
  private loop: Promise<void> | undefined;
  private deadline: NodeJS.Timeout | undefined;

  constructor(private readonly kube: KubeClient, private readonly o: LeaseElectorOptions) {}

  /** The uid of the Lease while this candidate holds it: features name it as their objects' owner. */
  get leaseUid(): string | undefined {
    return this.held?.metadata?.uid;
  }

  get isLeader(): boolean {
    return this.leading !== undefined;
  }

  start(): void {
    this.loop ??= this.run();
  }

  /** Stops campaigning; a leader releases the lease (holder cleared) so another candidate takes over at once. */
  async close(): Promise<void> {
    this.stop.abort();
    await this.loop;
    if (this.held !== undefined) await this.release();
    this.stepDown('stopping');
  }

  private async run(): Promise<void> {
    const { retryPeriodMs, renewDeadlineMs } = this.o.timings;
    while (!this.stop.signal.aborted) {
      const ok = await this.tryAcquireOrRenew();
      if (this.stop.signal.aborted) break;
      if (ok) {
        // The deadline runs on a timer, not between attempts: a renewal hanging in the API
        // must not keep this candidate acting past the point where another may take over.
        clearTimeout(this.deadline);
        this.deadline = setTimeout(() => this.stepDown(`no renewal within ${renewDeadlineMs} ms`), renewDeadlineMs);
        this.deadline.unref();
        if (!this.leading) {
          this.leading = new AbortController();
          log('info', 'leader election: leading', { lease: `${this.o.namespace}/${this.o.name}`, identity: this.o.identity });
          this.o.onLeading(this.leading.signal);
        }
      } else if (this.leading && this.held === undefined) {
        this.stepDown('another candidate holds the lease');
      }
      // A follower waits on a watch of the lease instead of reading it every retry period.
      const seen = this.seen;
      this.seen = undefined;
      if (!this.leading && seen !== undefined && (await this.follow(seen)) === 'look') continue;
      await pause(retryPeriodMs, this.stop.signal);
    }
  }

  private stepDown(why: string): void {
    clearTimeout(this.deadline);
    if (!this.leading) return;
    log('warn', 'leader election: no longer leading', { lease: `${this.o.namespace}/${this.o.name}`, identity: this.o.identity, why });
    this.leading.abort();
    this.leading = undefined;
  }

  private bound(): number {
    return Math.min(this.kube.options.callTimeoutMs, this.o.timings.renewDeadlineMs);
  }

  /** One attempt; true when this candidate holds the lease afterwards. */
  async tryAcquireOrRenew(): Promise<boolean> {
    const { namespace, name } = this.o;
    try {
      if (this.held !== undefined) {
        // The fast path of a leader: its own last write is current unless someone else wrote since.
        const renewed = await this.write(this.held, false);
        if (renewed) return true;
        if (this.held === undefined) return false;
      }
      let current: V1Lease;
      try {
        current = await this.kube.bounded(`get lease ${namespace}/${name}`, (a) => a.coordination.readNamespacedLease({ name, namespace }), this.bound());
      } catch (err) {
        if (!isNotFound(err)) throw err;
        return await this.create();
      }
      const holder = current.spec?.holderIdentity ?? '';
      const observed = this.observe(current);
      if (holder !== '' && holder !== this.o.identity && Date.now() - observed.atMs < this.durationMs(current)) {
        this.seen = current;
        return false;
      }
      return await this.write(current, holder !== this.o.identity);
    } catch (err) {
      log('warn', 'leader election: lease request failed', { lease: `${namespace}/${name}`, error: describeApiError(err, `lease ${namespace}/${name}`) });
      return false;
    }
  }

  /** Notes when this candidate last saw the lease change (holder, renewal or version), on its own clock. */
  private observe(lease: V1Lease): { key: string; atMs: number } {
    const spec = lease.spec ?? {};
    const key = `${spec.holderIdentity ?? ''}|${spec.renewTime ? new Date(spec.renewTime).getTime() : ''}|${lease.metadata?.resourceVersion ?? ''}`;
    if (this.observed?.key !== key) this.observed = { key, atMs: Date.now() };
    return this.observed;
  }

  private durationMs(lease: V1Lease): number {
    return (lease.spec?.leaseDurationSeconds ?? this.o.timings.leaseDurationSeconds) * 1000;
  }

  /**
   * A follower's wait, from the lease it last read: one watch of the lease held open (renewed
   * from where it was when the server ends it) instead of a read every retry period, so a
   * follower makes no steady requests, however many nodes stand. 'look' when the lease should
   * be read again now: it expired unrenewed on this candidate's clock, was released or deleted,
   * or the server lost the watch's place (410 Gone). 'failed' when the watch cannot run (no
   * watch permission, an old component's role): the caller reads every retry period, as before.
   */
  private async follow(seen: V1Lease): Promise<'look' | 'failed' | 'stopped'> {
    const { namespace, name } = this.o;
    let resourceVersion = seen.metadata?.resourceVersion;
    let durationMs = this.durationMs(seen);
    while (!this.stop.signal.aborted) {
      const watching = new AbortController();
      const onStop = (): void => watching.abort();
      this.stop.signal.addEventListener('abort', onStop, { once: true });
      let look = false;
      let timer: NodeJS.Timeout | undefined;
      const lookNow = (): void => {
        look = true;
        watching.abort();
      };
      const untilExpiry = (): void => {
        clearTimeout(timer);
        timer = setTimeout(lookNow, Math.max(0, (this.observed?.atMs ?? Date.now()) + durationMs - Date.now()));
      };
      untilExpiry();
      const started = Date.now();
      try {
        await this.kube.streaming((a) => a.coordination.watchNamespacedLease({
          namespace, fieldSelector: `metadata.name=${name}`, timeoutSeconds: watchTimeoutSeconds(), allowWatchBookmarks: true,
          ...(resourceVersion !== undefined ? { resourceVersion } : {}),
        }, (event) => {
          if (event.type === 'ERROR') return lookNow();
          const lease = event.object as V1Lease;
          resourceVersion = lease.metadata?.resourceVersion ?? resourceVersion;
          if (event.type === 'BOOKMARK') return;
          if (event.type === 'DELETED' || (lease.spec?.holderIdentity ?? '') === '') return lookNow();
          this.observe(lease);
          durationMs = this.durationMs(lease);
          untilExpiry();
        }), watching.signal);
      } catch (err) {
        if (!look && !this.stop.signal.aborted) {
          log('warn', 'leader election: cannot watch the lease; reading it every retry period instead', { lease: `${namespace}/${name}`, error: describeApiError(err, `watch lease ${namespace}/${name}`) });
          return 'failed';
        }
      } finally {
        clearTimeout(timer);
        this.stop.signal.removeEventListener('abort', onStop);
      }
      if (this.stop.signal.aborted) return 'stopped';
      if (look) return 'look';
      // The server ended the watch at its timeout; one that ends at once is not a working watch.
      if (Date.now() - started < this.o.timings.retryPeriodMs) return 'failed';
    }
    return 'stopped';
  }

  private spec(now: Date, acquired: boolean, previous: V1Lease['spec']): NonNullable<V1Lease['spec']> {
    return {
      holderIdentity: this.o.identity,
      leaseDurationSeconds: this.o.timings.leaseDurationSeconds,
      acquireTime: acquired || previous?.acquireTime === undefined ? new MicroTime(now.getTime()) : new MicroTime(new Date(previous.acquireTime).getTime()),
      renewTime: new MicroTime(now.getTime()),
      leaseTransitions: (previous?.leaseTransitions ?? 0) + (acquired && previous?.holderIdentity ? 1 : 0),
    };
  }

  private async create(): Promise<boolean> {
    const { namespace, name } = this.o;
    const body: V1Lease = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace }, spec: this.spec(new Date(), true, undefined) };
    try {
      this.held = await this.kube.bounded(`create lease ${namespace}/${name}`, (a) => a.coordination.createNamespacedLease({ namespace, body }), this.bound());
      return true;
    } catch (err) {
      if (isConflict(err)) return false; // another candidate created it first
      throw err;
    }
  }

  /** Writes `base` with this candidate as holder; false on a 409 (someone wrote since `base` was read). */
  private async write(base: V1Lease, acquiring: boolean): Promise<boolean> {
    const { namespace, name } = this.o;
    const body: V1Lease = { ...base, metadata: { ...base.metadata, name, namespace }, spec: this.spec(new Date(), acquiring, base.spec) };
    try {
      this.held = await this.kube.bounded(`update lease ${namespace}/${name}`, (a) => a.coordination.replaceNamespacedLease({ name, namespace, body }), this.bound());
      return true;
    } catch (err) {
      if (isConflict(err) || isNotFound(err)) {
        // Stale: re-read before deciding. A leader whose renewal is refused because another
        // candidate took the lease over must stop at once, not at the renew deadline.
        if (!acquiring) this.held = await this.stillMine();
        return false;
      }
      throw err;
    }
  }

  /** After a refused renewal: the current lease when this candidate still holds it, else undefined. */
  private async stillMine(): Promise<V1Lease | undefined> {
    const { namespace, name } = this.o;
    try {
      const current = await this.kube.bounded(`get lease ${namespace}/${name}`, (a) => a.coordination.readNamespacedLease({ name, namespace }), this.bound());
      return current.spec?.holderIdentity === this.o.identity ? current : undefined;
    } catch {
      return undefined;
    }
  }

  private async release(): Promise<void> {
    const { namespace, name } = this.o;
    const held = this.held;
    this.held = undefined;
    if (held === undefined) return;
    const body: V1Lease = { ...held, spec: { ...held.spec, holderIdentity: undefined, leaseDurationSeconds: 1, renewTime: new MicroTime(Date.now()) } };
    try {
      await this.kube.bounded(`release lease ${namespace}/${name}`, (a) => a.coordination.replaceNamespacedLease({ name, namespace, body }), this.bound());
      log('info', 'leader election: released the lease', { lease: `${namespace}/${name}`, identity: this.o.identity });
    } catch (err) {
      // Someone else wrote it (it is theirs now) or the API is away: the lease then expires.
      log('warn', 'leader election: could not release the lease; it expires instead', { error: describeApiError(err, `release lease ${namespace}/${name}`) });
    }
  }
}
