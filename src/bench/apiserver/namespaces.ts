// Namespaces as the API lists them: the stored Namespace objects plus one synthesised, Active, for every namespace in use.
import { type AnyObject } from '../api/kinds.js';
import { NAMESPACED, KINDS } from '../api/resources.js';
import type { ObjectStore } from '../api/object-store.js';
import { VIRTUAL_EPOCH_MS } from '../clock/virtual-clock.js';

/** The namespaces every cluster has from the start. */
export const SYSTEM_NAMESPACES = ['default', 'kube-node-lease', 'kube-public', 'kube-system'];

/**
 * The bench never required Namespace objects (manifests name namespaces freely), so one
 * that is used but not stored is shown as a cluster would show it: Active, with the
 * `kubernetes.io/metadata.name` label the API server sets.
 */
export function synthesisedNamespace(name: string): AnyObject {
  return {
    apiVersion: 'v1', kind: 'Namespace',
    metadata: { name, uid: `00000000-0000-4000-8000-ns${Buffer.from(name).toString('hex').slice(0, 8).padEnd(8, '0')}`, resourceVersion: '1', creationTimestamp: new Date(VIRTUAL_EPOCH_MS), labels: { 'kubernetes.io/metadata.name': name } },
    spec: { finalizers: ['kubernetes'] },
    status: { phase: 'Active' },
  } as AnyObject;
}

/** Names of namespaces in use: the system ones and every one an object lives in. */
export function namespacesInUse(store: ObjectStore): Set<string> {
  const names = new Set(SYSTEM_NAMESPACES);
  for (const kind of KINDS) {
    if (!NAMESPACED[kind]) continue;
    for (const o of store.list(kind)) if (o.metadata?.namespace) names.add(o.metadata.namespace);
  }
  return names;
}

/** Stored Namespace objects and synthesised ones for the rest, sorted by name. */
export function listNamespaces(store: ObjectStore): AnyObject[] {
  const stored = store.list('Namespace');
  const have = new Set(stored.map((n) => n.metadata?.name));
  const out: AnyObject[] = [...stored];
  for (const n of namespacesInUse(store)) if (!have.has(n)) out.push(synthesisedNamespace(n));
  // Code-unit order, as store lists sort, so a continue token's key compares the same way.
  return out.sort((a, b) => { const x = a.metadata?.name ?? ''; const y = b.metadata?.name ?? ''; return x < y ? -1 : x > y ? 1 : 0; });
}

/** One namespace, stored or synthesised; undefined when neither. */
export function getNamespace(store: ObjectStore, name: string): AnyObject | undefined {
  return store.get('Namespace', name) ?? (namespacesInUse(store).has(name) ? synthesisedNamespace(name) : undefined);
}
