// The bench's object store, which the API server (apiserver/) serves: typed objects with uids, resourceVersions, finalizers and synchronous watch events.
import { objectKey, type Kind, type KindMap } from './kinds.js';
import { NAMESPACED } from './resources.js';
import { bumpOnDeletion, setCreateGeneration, setUpdateGeneration } from './generation.js';
import type { VirtualClock } from '../clock/virtual-clock.js';
import rfdc from 'rfdc';

export type WatchType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** One change as a watcher sees it: the object after the change (before it, for DELETED). Shared by all watchers: read only. */
export interface WatchEvent<K extends Kind> {
  type: WatchType;
  kind: K;
  object: KindMap[K];
  old: KindMap[K] | undefined;
}

export type WatchHandler<K extends Kind> = (event: WatchEvent<K>) => void;

/** A write lost a race: the object changed since it was read (HTTP 409 upstream). */
export class ConflictError extends Error {
  constructor(kind: Kind, key: string) {
    super(`Operation cannot be fulfilled on ${kind} "${key}": the object has been modified`);
  }
}

export class NotFoundError extends Error {
  constructor(kind: Kind, key: string) {
    super(`${kind} "${key}" not found`);
  }
}

export class AlreadyExistsError extends Error {
  constructor(kind: Kind, key: string) {
    super(`${kind} "${key}" already exists`);
  }
}

/**
 * Objects by kind and key. Every write bumps a global resourceVersion, checks the
 * caller's resourceVersion (optimistic concurrency, as the API server does) and tells
 * watchers synchronously, so controllers never see events out of order. Reads return
 * copies: a controller must write to change anything.
 */
export class ObjectStore {
  private readonly objects = new Map<Kind, Map<string, KindMap[Kind]>>();
  private readonly watchers = new Map<Kind, WatchHandler<Kind>[]>();
  private rv = 0;
  private uidCounter = 0;
  private nameCounter = 0;
  /** Writes so far: the runtime uses it to tell whether anything changed. */
  writes = 0;
  /**
   * Of those, writes to Leases: leader-election heartbeats (a real csi-resizer renews its Lease
   * every few seconds) that say nothing about the cluster's state, so "settled" leaves them out.
   */
  heartbeats = 0;

  constructor(private readonly clock: VirtualClock, private readonly uidPrefix = 'b') {}

  private bucket<K extends Kind>(kind: K): Map<string, KindMap[K]> {
    let b = this.objects.get(kind);
    if (b === undefined) {
      b = new Map();
      this.objects.set(kind, b);
    }
    return b as Map<string, KindMap[K]>;
  }

  watch<K extends Kind>(kind: K, handler: WatchHandler<K>): void {
    const list = this.watchers.get(kind) ?? [];
    list.push(handler as unknown as WatchHandler<Kind>);
    this.watchers.set(kind, list);
  }

  private notify<K extends Kind>(kind: K, type: WatchType, object: KindMap[K], old: KindMap[K] | undefined): void {
    this.writes++;
    if (kind === 'Lease') this.heartbeats++;
    const handlers = this.watchers.get(kind) ?? [];
    if (handlers.length === 0) return;
    // One copy shared by every watcher (as informers share their cache): watchers only read it.
    const event = { type, kind, object: clone(object), old: old === undefined ? undefined : clone(old) } as WatchEvent<Kind>;
    for (const h of handlers) h(event);
  }

  get<K extends Kind>(kind: K, name: string, namespace?: string): KindMap[K] | undefined {
    const o = this.bucket(kind).get(keyOf(kind, name, namespace));
    return o === undefined ? undefined : clone(o);
  }

  /** Every object of a kind, optionally in one namespace, sorted by key so iteration order is stable. */
  list<K extends Kind>(kind: K, namespace?: string): KindMap[K][] {
    const out: KindMap[K][] = [];
    const keys = [...this.bucket(kind).keys()].sort();
    for (const k of keys) {
      const o = this.bucket(kind).get(k)!;
      if (namespace === undefined || o.metadata?.namespace === namespace) out.push(clone(o));
    }
    return out;
  }

  /** The resourceVersion of the latest write (a list's metadata.resourceVersion). */
  get resourceVersion(): string {
    return String(this.rv);
  }

  count(kind: Kind): number {
    return this.bucket(kind).size;
  }

  private nextUid(): string {
    // Deterministic, UUID-shaped: the same run gives the same uids, hence the same PV names.
    const n = (++this.uidCounter).toString(16).padStart(12, '0');
    return `0000${this.uidPrefix.padEnd(4, '0').slice(0, 4)}-0000-4000-8000-${n}`;
  }

  private generateSuffix(): string {
    const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
    let n = ++this.nameCounter * 7919;
    let s = '';
    for (let i = 0; i < 5; i++) {
      s += alphabet[n % alphabet.length];
      n = Math.floor(n / alphabet.length) + i * 31;
    }
    return s;
  }

  create<K extends Kind>(kind: K, input: KindMap[K]): KindMap[K] {
    const obj = clone(input);
    const meta = (obj.metadata ??= {});
    if (!meta.name && meta.generateName) meta.name = meta.generateName + this.generateSuffix();
    if (!meta.name) throw new Error(`${kind}: metadata.name or generateName is required`);
    if (NAMESPACED[kind]) meta.namespace ??= 'default';
    else delete meta.namespace;
    const key = objectKey(obj);
    if (this.bucket(kind).has(key)) throw new AlreadyExistsError(kind, key);
    meta.uid = this.nextUid();
    meta.resourceVersion = String(++this.rv);
    meta.creationTimestamp = this.clock.date();
    setCreateGeneration(kind, obj);
    (obj as { kind?: string }).kind = kind;
    this.bucket(kind).set(key, obj);
    this.notify(kind, 'ADDED', obj, undefined);
    return clone(obj);
  }

  /**
   * Replaces an object. The caller's resourceVersion must be current (or absent, to
   * force). An object being deleted whose last finalizer goes away is removed.
   */
  update<K extends Kind>(kind: K, input: KindMap[K]): KindMap[K] {
    const obj = clone(input);
    const key = objectKey(obj);
    const current = this.bucket(kind).get(key);
    if (current === undefined) throw new NotFoundError(kind, key);
    const rv = obj.metadata?.resourceVersion;
    if (rv !== undefined && rv !== current.metadata?.resourceVersion) throw new ConflictError(kind, key);
    const meta = obj.metadata!;
    meta.uid = current.metadata?.uid;
    meta.creationTimestamp = current.metadata?.creationTimestamp;
    if (current.metadata?.deletionTimestamp) meta.deletionTimestamp = current.metadata.deletionTimestamp;
    setUpdateGeneration(kind, obj, current);
    meta.resourceVersion = String(++this.rv);
    // Removing the last finalizer of an object being deleted completes the deletion.
    if (meta.deletionTimestamp && (meta.finalizers ?? []).length === 0 && (current.metadata?.finalizers ?? []).length > 0) {
      this.bucket(kind).delete(key);
      this.notify(kind, 'DELETED', obj, current);
      return clone(obj);
    }
    this.bucket(kind).set(key, obj);
    this.notify(kind, 'MODIFIED', obj, current);
    return clone(obj);
  }

  /**
   * Reads, lets `mutate` change a copy, writes it back; retries on conflict. Returns the
   * written object, or undefined when the object is gone or `mutate` returns false.
   */
  modify<K extends Kind>(kind: K, name: string, namespace: string | undefined, mutate: (o: KindMap[K]) => boolean | void): KindMap[K] | undefined {
    return readModifyWrite(kind, name, namespace, mutate, (k, n, ns) => this.get(k, n, ns), (k, o) => this.update(k, o));
  }


  /**
   * Deletes an object: with finalizers, or `graceful` (a pod on a node, which its kubelet
   * must tear down first), it only gets a deletionTimestamp. Missing objects are fine.
   */
  delete(kind: Kind, name: string, namespace?: string, graceful = false): boolean {
    const key = keyOf(kind, name, namespace);
    const current = this.bucket(kind).get(key);
    if (current === undefined) return false;
    if ((current.metadata?.finalizers ?? []).length > 0 || graceful) {
      if (current.metadata?.deletionTimestamp) return true;
      const next = clone(current);
      next.metadata!.deletionTimestamp = this.clock.date();
      bumpOnDeletion(next);
      next.metadata!.resourceVersion = String(++this.rv);
      this.bucket(kind).set(key, next);
      this.notify(kind, 'MODIFIED', next, current);
      return true;
    }
    this.bucket(kind).delete(key);
    this.notify(kind, 'DELETED', this.tombstone(current), current);
    return true;
  }

  /**
   * The object a DELETED event carries: its last state with a resourceVersion of its own,
   * as upstream's, so a watch resumed from it neither repeats nor skips a change.
   */
  private tombstone<K extends Kind>(current: KindMap[K]): KindMap[K] {
    const gone = clone(current);
    gone.metadata = { ...gone.metadata, resourceVersion: String(++this.rv) };
    return gone;
  }

  /** Removes an object now, finalizers or not (kubelet's final delete of a pod it tore down). */
  forceDelete(kind: Kind, name: string, namespace?: string): boolean {
    const key = keyOf(kind, name, namespace);
    const current = this.bucket(kind).get(key);
    if (current === undefined) return false;
    this.bucket(kind).delete(key);
    this.notify(kind, 'DELETED', this.tombstone(current), current);
    return true;
  }

  /** Whether any object of any kind has this uid (the garbage collector's owner lookup). */
  existsUid(kind: Kind, uid: string): boolean {
    for (const o of this.bucket(kind).values()) if (o.metadata?.uid === uid) return true;
    return false;
  }
}

/**
 * The read, change, write-back loop with retries on conflict, for the store itself and for
 * client views that write through it (and count what they write).
 */
export function readModifyWrite<K extends Kind>(
  kind: K, name: string, namespace: string | undefined, mutate: (o: KindMap[K]) => boolean | void,
  read: (kind: K, name: string, namespace: string | undefined) => KindMap[K] | undefined,
  write: (kind: K, o: KindMap[K]) => KindMap[K],
): KindMap[K] | undefined {
  for (let attempt = 0; attempt < 5; attempt++) {
    const o = read(kind, name, namespace);
    if (o === undefined) return undefined;
    if (mutate(o) === false) return undefined;
    try {
      return write(kind, o);
    } catch (err) {
      if (!(err instanceof ConflictError)) throw err;
    }
  }
  throw new ConflictError(kind, keyOf(kind, name, namespace));
}

function keyOf(kind: Kind, name: string, namespace: string | undefined): string {
  return NAMESPACED[kind] ? `${namespace ?? 'default'}/${name}` : name;
}

/**
 * Deep copy that keeps Date objects (and undefined fields). Every read of the store is one, and
 * a 100-node bench run makes hundreds of thousands (each node's provisioner reads every claim it
 * is told of); structuredClone's serialize-and-parse was the largest single part of the bench
 * process's own CPU there. This copier walks the object instead, about five times faster on a pod.
 */
const deepCopy = rfdc({ proto: false, circles: false });

export function clone<T>(o: T): T {
  return deepCopy(o);
}
