// The API calls the driver makes, each as a path and a verb on the transport, with client-node's own method names, parameters and result types.
import type { CoordinationV1Api, CoreV1Api, StorageV1Api } from '@kubernetes/client-node';
import type { HttpTransport, QueryValue, WatchEvent } from './http-transport.js';

/**
 * Only the methods the driver calls: a new call site fails to compile until its method is
 * added here (and its RBAC to deploy/base/rbac.yaml), so the door stays as narrow as its use.
 */
export type CoreApi = Pick<CoreV1Api,
  | 'readNode' | 'listNode'
  | 'listPersistentVolume' | 'readPersistentVolume' | 'replacePersistentVolume' | 'deletePersistentVolume'
  | 'listNamespacedPod' | 'readNamespacedPod' | 'deleteNamespacedPod'
  | 'readNamespacedPersistentVolumeClaim' | 'deleteNamespacedPersistentVolumeClaim' | 'listPersistentVolumeClaimForAllNamespaces'
  | 'createNamespacedEvent' | 'readNamespacedEvent' | 'patchNamespacedEvent'> & {
  watchNode(p: WatchParams, onEvent: (event: WatchEvent) => void): Promise<void>;
  watchPersistentVolume(p: WatchParams, onEvent: (event: WatchEvent) => void): Promise<void>;
  watchPersistentVolumeClaimForAllNamespaces(p: WatchParams, onEvent: (event: WatchEvent) => void): Promise<void>;
};
export type StorageApi = Pick<StorageV1Api, 'readStorageClass' | 'listStorageClass'
  | 'listNamespacedCSIStorageCapacity' | 'createNamespacedCSIStorageCapacity' | 'replaceNamespacedCSIStorageCapacity' | 'deleteNamespacedCSIStorageCapacity'> & {
  watchNamespacedCSIStorageCapacity(p: WatchParams & { namespace: string }, onEvent: (event: WatchEvent) => void): Promise<void>;
  watchStorageClass(p: WatchParams, onEvent: (event: WatchEvent) => void): Promise<void>;
};
/** A watch of one resource from a resourceVersion (an informer's, after its list), events handed over as they come. */
export interface WatchParams {
  resourceVersion: string;
  timeoutSeconds: number;
  allowWatchBookmarks?: boolean;
  fieldSelector?: string;
  labelSelector?: string;
}
/** A watch of the namespace's Leases (one, by a metadata.name field selector), events handed over as they come. */
export interface LeaseWatchParams {
  namespace: string;
  fieldSelector: string;
  resourceVersion?: string;
  timeoutSeconds: number;
  allowWatchBookmarks?: boolean;
}
export type CoordinationApi = Pick<CoordinationV1Api, 'readNamespacedLease' | 'createNamespacedLease' | 'replaceNamespacedLease'> & {
  watchNamespacedLease(p: LeaseWatchParams, onEvent: (event: WatchEvent) => void): Promise<void>;
};

/** The APIs the driver's features use; each feature documents the RBAC it needs (docs/api-access.md). */
export interface KubeApis {
  core: CoreApi;
  storage: StorageApi;
  coordination: CoordinationApi;
}

/**
 * The patch kind client-node picks for a patch call given no other: of the kinds the API
 * accepts it prefers JSON Patch (an array of operations), which is what the callers send.
 */
export const JSON_PATCH = 'application/json-patch+json';

/** The parameters that are part of the path or the body, not the query. */
const NOT_QUERY = new Set(['name', 'namespace', 'body']);

/**
 * The query of a request object: every other parameter under its API name (client-node spells
 * `continue` as `_continue`, a reserved word); absent ones are left out.
 */
export function queryOf(params: object): Record<string, QueryValue> {
  const q: Record<string, QueryValue> = {};
  for (const [k, v] of Object.entries(params)) {
    if (NOT_QUERY.has(k) || v === undefined || v === null) continue;
    if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') throw new Error(`query parameter ${k} is not a string, number or boolean`);
    q[k === '_continue' ? 'continue' : k] = v;
  }
  return q;
}

const seg = encodeURIComponent;
const CORE = '/api/v1';
const STORAGE = '/apis/storage.k8s.io/v1';
const COORDINATION = '/apis/coordination.k8s.io/v1';

export function thinApis(t: HttpTransport): KubeApis {
  const core: CoreApi = {
    readNode: (p) => t.request({ method: 'GET', path: `${CORE}/nodes/${seg(p.name)}`, query: queryOf(p) }),
    listNode: (p = {}) => t.request({ method: 'GET', path: `${CORE}/nodes`, query: queryOf(p) }),
    listPersistentVolume: (p = {}) => t.request({ method: 'GET', path: `${CORE}/persistentvolumes`, query: queryOf(p) }),
    readPersistentVolume: (p) => t.request({ method: 'GET', path: `${CORE}/persistentvolumes/${seg(p.name)}`, query: queryOf(p) }),
    replacePersistentVolume: (p) => t.request({ method: 'PUT', path: `${CORE}/persistentvolumes/${seg(p.name)}`, query: queryOf(p), body: p.body }),
    deletePersistentVolume: (p) => t.request({ method: 'DELETE', path: `${CORE}/persistentvolumes/${seg(p.name)}`, query: queryOf(p), body: p.body }),
    listNamespacedPod: (p) => t.request({ method: 'GET', path: `${CORE}/namespaces/${seg(p.namespace)}/pods`, query: queryOf(p) }),
    readNamespacedPod: (p) => t.request({ method: 'GET', path: `${CORE}/namespaces/${seg(p.namespace)}/pods/${seg(p.name)}`, query: queryOf(p) }),
    deleteNamespacedPod: (p) => t.request({ method: 'DELETE', path: `${CORE}/namespaces/${seg(p.namespace)}/pods/${seg(p.name)}`, query: queryOf(p), body: p.body }),
    readNamespacedPersistentVolumeClaim: (p) => t.request({ method: 'GET', path: `${CORE}/namespaces/${seg(p.namespace)}/persistentvolumeclaims/${seg(p.name)}`, query: queryOf(p) }),
    deleteNamespacedPersistentVolumeClaim: (p) => t.request({ method: 'DELETE', path: `${CORE}/namespaces/${seg(p.namespace)}/persistentvolumeclaims/${seg(p.name)}`, query: queryOf(p), body: p.body }),
    listPersistentVolumeClaimForAllNamespaces: (p = {}) => t.request({ method: 'GET', path: `${CORE}/persistentvolumeclaims`, query: queryOf(p) }),
    createNamespacedEvent: (p) => t.request({ method: 'POST', path: `${CORE}/namespaces/${seg(p.namespace)}/events`, query: queryOf(p), body: p.body }),
    watchNode: (p, onEvent) => t.watch({ method: 'GET', path: `${CORE}/nodes`, query: { ...queryOf(p), watch: true } }, onEvent),
    watchPersistentVolume: (p, onEvent) => t.watch({ method: 'GET', path: `${CORE}/persistentvolumes`, query: { ...queryOf(p), watch: true } }, onEvent),
    watchPersistentVolumeClaimForAllNamespaces: (p, onEvent) => t.watch({ method: 'GET', path: `${CORE}/persistentvolumeclaims`, query: { ...queryOf(p), watch: true } }, onEvent),
    readNamespacedEvent: (p) => t.request({ method: 'GET', path: `${CORE}/namespaces/${seg(p.namespace)}/events/${seg(p.name)}`, query: queryOf(p) }),
    patchNamespacedEvent: (p) => t.request({ method: 'PATCH', path: `${CORE}/namespaces/${seg(p.namespace)}/events/${seg(p.name)}`, query: queryOf(p), body: p.body, contentType: JSON_PATCH }),
  };
  const storage: StorageApi = {
    readStorageClass: (p) => t.request({ method: 'GET', path: `${STORAGE}/storageclasses/${seg(p.name)}`, query: queryOf(p) }),
    listStorageClass: (p = {}) => t.request({ method: 'GET', path: `${STORAGE}/storageclasses`, query: queryOf(p) }),
    createNamespacedCSIStorageCapacity: (p) => t.request({ method: 'POST', path: `${STORAGE}/namespaces/${seg(p.namespace)}/csistoragecapacities`, query: queryOf(p), body: p.body }),
    replaceNamespacedCSIStorageCapacity: (p) => t.request({ method: 'PUT', path: `${STORAGE}/namespaces/${seg(p.namespace)}/csistoragecapacities/${seg(p.name)}`, query: queryOf(p), body: p.body }),
    listNamespacedCSIStorageCapacity: (p) => t.request({ method: 'GET', path: `${STORAGE}/namespaces/${seg(p.namespace)}/csistoragecapacities`, query: queryOf(p) }),
    deleteNamespacedCSIStorageCapacity: (p) => t.request({ method: 'DELETE', path: `${STORAGE}/namespaces/${seg(p.namespace)}/csistoragecapacities/${seg(p.name)}`, query: queryOf(p), body: p.body }),
    watchStorageClass: (p, onEvent) => t.watch({ method: 'GET', path: `${STORAGE}/storageclasses`, query: { ...queryOf(p), watch: true } }, onEvent),
    watchNamespacedCSIStorageCapacity: (p, onEvent) => t.watch({ method: 'GET', path: `${STORAGE}/namespaces/${seg(p.namespace)}/csistoragecapacities`, query: { ...queryOf(p), watch: true } }, onEvent),
  };
  const coordination: CoordinationApi = {
    readNamespacedLease: (p) => t.request({ method: 'GET', path: `${COORDINATION}/namespaces/${seg(p.namespace)}/leases/${seg(p.name)}`, query: queryOf(p) }),
    createNamespacedLease: (p) => t.request({ method: 'POST', path: `${COORDINATION}/namespaces/${seg(p.namespace)}/leases`, query: queryOf(p), body: p.body }),
    replaceNamespacedLease: (p) => t.request({ method: 'PUT', path: `${COORDINATION}/namespaces/${seg(p.namespace)}/leases/${seg(p.name)}`, query: queryOf(p), body: p.body }),
    watchNamespacedLease: (p, onEvent) => t.watch({ method: 'GET', path: `${COORDINATION}/namespaces/${seg(p.namespace)}/leases`, query: { ...queryOf(p), watch: true } }, onEvent),
  };
  return { core, storage, coordination };
}
