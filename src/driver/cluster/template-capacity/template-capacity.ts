// The leader-elected publisher of template capacity: keeps one CSIStorageCapacity per pool profile and storage class for the cluster autoscaler's template nodes, current as profiles and classes change, and deletes those of profiles that went.
import type { V1CSIStorageCapacity, V1OwnerReference } from '@kubernetes/client-node';
import type { KubeClient } from '../../../kube/kube-client.js';
import { describeApiError, isConflict, isNotFound } from '../../../kube/kube-errors.js';
import { LeaseElector, type LeaseTimings } from '../../../kube/leader-election.js';
import { log } from '../../../util/log.js';
import { pause, untilSynced } from '../../../kube/watch-timing.js';
import { formatBytesQuantity, parseQuantity } from '../../../util/quantity.js';
import type { PoolProfileSource } from '../profiles/pool-source.js';
import { TemplateCapacityInformers } from './template-capacity-informers.js';
import { CAPACITY_DRIVER_LABEL, CAPACITY_MANAGED_BY_LABEL, PROFILE_ANNOTATION, TEMPLATE_MANAGED_BY, templateObjects, type ClassInfo, type TemplateObject } from './template-objects.js';

export interface TemplateCapacityOptions {
  /** The driver's own namespace: the Lease and the objects. */
  namespace: string;
  timings: LeaseTimings;
  /** Pause between the leader's passes. */
  periodMs: number;
}

export const DEFAULT_TEMPLATE_CAPACITY_PERIOD_MS = 60_000;

/** One Lease per driver name, apart from node loss's: the two features are elected independently. */
export function templateCapacityLeaseName(driverName: string): string {
  return `${driverName.replace(/\./g, '-')}-template-capacity`;
}

/** What the last pass did, for logs and tests. */
export interface PassCounts {
  created: number;
  updated: number;
  deleted: number;
  kept: number;
}

function bytesOf(q: string | undefined): number | undefined {
  if (q === undefined) return undefined;
  try {
    return parseQuantity(q);
  } catch {
    return undefined;
  }
}

/** Maps compared whatever order the API server wrote their keys in. */
function sortedJson(m: Record<string, string>): string {
  return JSON.stringify(Object.entries(m).sort(([a], [b]) => a.localeCompare(b)));
}

export class TemplateCapacity {
  private readonly elector: LeaseElector;
  private readonly closing = new AbortController();
  private work: Promise<void> = Promise.resolve();
  private said = new Set<string>();
  /** The term's caches, on the leader only. */
  private caches: TemplateCapacityInformers | undefined;
  last: PassCounts | undefined;

  constructor(private readonly kube: KubeClient, private readonly source: PoolProfileSource, private readonly driverName: string, nodeId: string, private readonly o: TemplateCapacityOptions) {
    this.elector = new LeaseElector(kube, {
      namespace: o.namespace, name: templateCapacityLeaseName(driverName), identity: nodeId, timings: o.timings,
      onLeading: (stopped) => {
        const both = AbortSignal.any([stopped, this.closing.signal]);
        const caches = new TemplateCapacityInformers(kube, driverName, o.namespace);
        this.caches = caches;
        caches.start();
        this.work = (async () => {
          try {
            await untilSynced(caches.whenSynced(), both);
            while (!both.aborted) {
              try {
                await this.pass(both);
              } catch (err) {
                log('warn', 'template capacity: pass failed; the next one starts over', { error: describeApiError(err, 'template capacity') });
              }
              await pause(o.periodMs, both);
            }
          } finally {
            if (this.caches === caches) this.caches = undefined;
            await caches.stop();
          }
        })();
      },
    });
  }

  start(): void {
    this.elector.start();
    log('info', 'template capacity: campaigning for the lease', { lease: `${this.o.namespace}/${templateCapacityLeaseName(this.driverName)}`, label: this.source.labelKey });
  }

  async close(): Promise<void> {
    this.closing.abort();
    await this.work;
    await this.elector.close();
  }

  /** The classes the scheduler checks capacity for: this driver's, binding on first consumer. */
  private classes(caches: TemplateCapacityInformers): ClassInfo[] {
    return caches.classes.values()
      .filter((sc) => sc.provisioner === this.driverName && sc.volumeBindingMode === 'WaitForFirstConsumer')
      .map((sc) => ({ name: sc.metadata?.name ?? '', parameters: sc.parameters ?? {} }));
  }

  /**
   * One reconciliation from the term's caches: every wanted object made or brought up to date,
   * every other of ours deleted. Only writes are requests; an object written here comes back
   * through the watch (a create that finds it made already is a 409, compared next pass).
   */
  async pass(signal: AbortSignal): Promise<PassCounts> {
    const counts: PassCounts = { created: 0, updated: 0, deleted: 0, kept: 0 };
    const caches = this.caches;
    // Not whole (a list after a 410): deleting what a part-list lacks would be wrong.
    if (caches === undefined || !caches.synced) return counts;
    let profiles;
    try {
      profiles = await this.source.profiles();
    } catch (err) {
      // A profile that does not parse would otherwise delete its objects: keep everything as it is.
      this.sayOnce('warn', 'template capacity: the pool profiles do not parse; objects left as they are', (err as Error).message);
      return counts;
    }
    const { objects, skipped } = templateObjects(profiles, this.source.labelKey, this.classes(caches));
    for (const s of skipped) this.sayOnce('warn', 'template capacity: no object for a profile and class', `profile ${s.profile}, class ${s.storageClass}: ${s.why}`);
    const { namespace } = this.o;
    const existing = caches.objects.values();
    const uid = this.elector.leaseUid;
    if (uid === undefined || signal.aborted) return counts;
    const owner: V1OwnerReference = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', name: templateCapacityLeaseName(this.driverName), uid, controller: true };
    for (const want of objects) {
      if (signal.aborted) return counts;
      const body = this.body(want, owner);
      const have = existing.find((c) => c.metadata?.name === want.name);
      if (have === undefined) {
        try {
          await this.kube.bounded(`create csistoragecapacity ${namespace}/${want.name}`, (a) => a.storage.createNamespacedCSIStorageCapacity({ namespace, body }));
          counts.created++;
        } catch (err) {
          if (!isConflict(err)) throw err; // made already, not yet through the watch: the next pass compares it
        }
      } else if (this.differs(have, body)) {
        try {
          await this.kube.bounded(`update csistoragecapacity ${namespace}/${want.name}`, (a) => a.storage.replaceNamespacedCSIStorageCapacity({
            name: want.name, namespace, body: { ...body, metadata: { ...body.metadata, resourceVersion: have.metadata?.resourceVersion } },
          }));
          counts.updated++;
        } catch (err) {
          if (!isConflict(err)) throw err; // the cache's copy is older than the object: the next pass compares the newer one
        }
      } else {
        counts.kept++;
      }
    }
    const wanted = new Set(objects.map((o) => o.name));
    for (const c of existing) {
      const name = c.metadata?.name ?? '';
      if (wanted.has(name) || signal.aborted) continue;
      try {
        await this.kube.bounded(`delete csistoragecapacity ${namespace}/${name}`, (a) => a.storage.deleteNamespacedCSIStorageCapacity({ name, namespace, body: c.metadata?.uid ? { preconditions: { uid: c.metadata.uid } } : {} }));
        counts.deleted++;
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
    if (counts.created + counts.updated + counts.deleted > 0) log('info', 'template capacity: objects brought up to date', { ...counts });
    this.last = counts;
    return counts;
  }

  private body(o: TemplateObject, owner: V1OwnerReference): V1CSIStorageCapacity {
    return {
      apiVersion: 'storage.k8s.io/v1', kind: 'CSIStorageCapacity',
      metadata: {
        name: o.name, namespace: this.o.namespace,
        labels: { [CAPACITY_DRIVER_LABEL]: this.driverName, [CAPACITY_MANAGED_BY_LABEL]: TEMPLATE_MANAGED_BY },
        annotations: { [PROFILE_ANNOTATION]: `${this.source.labelKey}=${o.profile}` },
        ownerReferences: [owner],
      },
      storageClassName: o.storageClass,
      nodeTopology: { matchLabels: o.matchLabels },
      capacity: formatBytesQuantity(o.capacityBytes),
      maximumVolumeSize: formatBytesQuantity(o.maximumVolumeBytes),
    };
  }

  private differs(have: V1CSIStorageCapacity, want: V1CSIStorageCapacity): boolean {
    return have.storageClassName !== want.storageClassName
      || sortedJson(have.nodeTopology?.matchLabels ?? {}) !== sortedJson(want.nodeTopology?.matchLabels ?? {})
      || (have.nodeTopology?.matchExpressions ?? []).length > 0
      || bytesOf(have.capacity) !== bytesOf(want.capacity)
      || bytesOf(have.maximumVolumeSize) !== bytesOf(want.maximumVolumeSize)
      || have.metadata?.ownerReferences?.[0]?.uid !== want.metadata?.ownerReferences?.[0]?.uid
      || have.metadata?.annotations?.[PROFILE_ANNOTATION] !== want.metadata?.annotations?.[PROFILE_ANNOTATION];
  }

  private sayOnce(level: 'warn', msg: string, detail: string): void {
    if (this.said.has(detail)) return;
    this.said.add(detail);
    log(level, msg, { detail });
  }
}
