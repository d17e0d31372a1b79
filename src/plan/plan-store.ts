// The objects the bench's VolumeBinding plugin reads during a plan, held as plain maps: reads return the stored object (the plugin only reads), and only PVs still free to bind are listed.
import type { V1PersistentVolume } from '@kubernetes/client-node';
import type { StoreApi } from '../bench/api/client-view.js';
import type { AnyObject, Kind, KindMap } from '../bench/api/kinds.js';
import { NAMESPACED } from '../bench/api/resources.js';

/**
 * The bench's object store copies every object on every read, which is right for controllers
 * that run side by side and wrong for a planner asking 10,000 pods about 1,000 nodes. Here
 * the planner alone writes, through `put`, and the plugin reads the objects themselves.
 */
export class PlanStore implements StoreApi {
  private readonly objects = new Map<Kind, Map<string, AnyObject>>();
  /**
   * The PVs a claim could still be matched to. The plugin lists PVs once per pod to find a
   * static match; the volumes the plan provisions are bound from birth and never match another
   * claim, so they are kept out of the list (a pod's own bound PV is read with `get`).
   */
  private readonly free = new Map<string, V1PersistentVolume>();

  private bucket(kind: Kind): Map<string, AnyObject> {
    let b = this.objects.get(kind);
    if (b === undefined) this.objects.set(kind, b = new Map());
    return b;
  }

  private static key(kind: Kind, name: string, namespace: string | undefined): string {
    return NAMESPACED[kind] ? `${namespace ?? 'default'}/${name}` : name;
  }

  /** Adds or replaces an object. A PV is listed while it has no claimRef. */
  put<K extends Kind>(kind: K, object: KindMap[K]): void {
    const meta = object.metadata!;
    if (NAMESPACED[kind]) meta.namespace ??= 'default';
    const key = PlanStore.key(kind, meta.name ?? '', meta.namespace);
    this.bucket(kind).set(key, object as AnyObject);
    if (kind === 'PersistentVolume') {
      const pv = object as V1PersistentVolume;
      if (pv.spec?.claimRef === undefined && (pv.status?.phase ?? 'Available') === 'Available') this.free.set(key, pv);
      else this.free.delete(key);
    }
  }

  get<K extends Kind>(kind: K, name: string, namespace?: string): KindMap[K] | undefined {
    return this.bucket(kind).get(PlanStore.key(kind, name, namespace)) as KindMap[K] | undefined;
  }

  list<K extends Kind>(kind: K, namespace?: string): KindMap[K][] {
    const all = kind === 'PersistentVolume' ? [...this.free.values()] : [...this.bucket(kind).values()];
    return (namespace === undefined ? all : all.filter((o) => o.metadata?.namespace === namespace)) as KindMap[K][];
  }

  count(kind: Kind): number {
    return this.bucket(kind).size;
  }

  existsUid(kind: Kind, uid: string): boolean {
    for (const o of this.bucket(kind).values()) if (o.metadata?.uid === uid) return true;
    return false;
  }

  // The plugin's PreBind writes are not run by the planner: it binds with `put`.
  watch(): void {}
  create<K extends Kind>(kind: K): KindMap[K] { return readOnly(kind); }
  update<K extends Kind>(kind: K): KindMap[K] { return readOnly(kind); }
  modify<K extends Kind>(kind: K): KindMap[K] | undefined { return readOnly(kind); }
  delete(kind: Kind): boolean { return readOnly(kind); }
  forceDelete(kind: Kind): boolean { return readOnly(kind); }
}

function readOnly(kind: Kind): never {
  throw new Error(`the plan's store is written by the planner only (a write of a ${kind} was asked)`);
}
