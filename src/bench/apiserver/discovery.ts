// API discovery: the group and resource lists under /api and /apis, in the legacy and the aggregated (apidiscovery.k8s.io) forms.
import { RESOURCES, type ResourceType } from '../api/resources.js';
import { hasScale } from './scale.js';

const VERBS_ALL = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
/** Namespaces have no deletecollection upstream. */
const VERBS_NAMESPACE = ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'];
const VERBS_STATUS = ['get', 'patch', 'update'];

export const BENCH_VERSION = {
  major: '1',
  minor: '32',
  gitVersion: 'v1.32.0-lode-bench',
  gitCommit: '0000000000000000000000000000000000000000',
  gitTreeState: 'clean',
  buildDate: '2026-01-01T00:00:00Z',
  goVersion: 'go1.23.0',
  compiler: 'gc',
  platform: 'linux/amd64',
};

function verbs(r: ResourceType): string[] {
  return r.kind === 'Namespace' ? VERBS_NAMESPACE : VERBS_ALL;
}

/** Groups in the order they are served: the core group first, then the others by first registration. */
export function servedGroups(): { group: string; versions: string[] }[] {
  const out: { group: string; versions: string[] }[] = [];
  for (const r of RESOURCES) {
    let g = out.find((x) => x.group === r.group);
    if (g === undefined) out.push(g = { group: r.group, versions: [] });
    if (!g.versions.includes(r.version)) g.versions.push(r.version);
  }
  return out.sort((a, b) => (a.group === '' ? -1 : b.group === '' ? 1 : 0));
}

export function apiVersions(serverAddress: string): object {
  return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }] };
}

function apiGroup(group: string, versions: string[]): object {
  const vs = versions.map((v) => ({ groupVersion: `${group}/${v}`, version: v }));
  return { name: group, versions: vs, preferredVersion: vs[0] };
}

export function apiGroupList(): object {
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: servedGroups().filter((g) => g.group !== '').map((g) => apiGroup(g.group, g.versions)) };
}

export function apiGroupDoc(group: string): object | undefined {
  const g = servedGroups().find((x) => x.group === group && group !== '');
  return g === undefined ? undefined : { kind: 'APIGroup', apiVersion: 'v1', ...apiGroup(g.group, g.versions) };
}

/** /api/v1 or /apis/G/V: undefined when nothing is served there. */
export function apiResourceList(group: string, version: string): object | undefined {
  const rs = RESOURCES.filter((r) => r.group === group && r.version === version);
  if (rs.length === 0) return undefined;
  const resources: object[] = [];
  for (const r of rs) {
    resources.push({
      name: r.plural, singularName: r.singular, namespaced: r.namespaced, kind: r.kind, verbs: verbs(r),
      ...(r.shortNames.length > 0 ? { shortNames: r.shortNames } : {}), ...(r.categories.length > 0 ? { categories: r.categories } : {}),
      storageVersionHash: '',
    });
    if (r.statusSubresource) resources.push({ name: `${r.plural}/status`, singularName: '', namespaced: r.namespaced, kind: r.kind, verbs: VERBS_STATUS });
    if (hasScale(r)) resources.push({ name: `${r.plural}/scale`, singularName: '', namespaced: r.namespaced, group: 'autoscaling', version: 'v1', kind: 'Scale', verbs: VERBS_STATUS });
  }
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: group === '' ? version : `${group}/${version}`, resources };
}

function subresources(r: ResourceType): object[] {
  return [
    ...(r.statusSubresource ? [{ subresource: 'status', responseKind: { group: r.group, version: r.version, kind: r.kind }, verbs: VERBS_STATUS }] : []),
    ...(hasScale(r) ? [{ subresource: 'scale', responseKind: { group: 'autoscaling', version: 'v1', kind: 'Scale' }, verbs: VERBS_STATUS }] : []),
  ];
}

/** The aggregated form: /api answers the core group only, /apis every other one. */
export function aggregatedDiscovery(core: boolean, apiVersion: 'apidiscovery.k8s.io/v2' | 'apidiscovery.k8s.io/v2beta1'): object {
  const groups = servedGroups().filter((g) => (g.group === '') === core);
  return {
    kind: 'APIGroupDiscoveryList', apiVersion, metadata: {},
    items: groups.map((g) => ({
      metadata: { name: g.group },
      versions: g.versions.map((v) => ({
        version: v,
        freshness: 'Current',
        resources: RESOURCES.filter((r) => r.group === g.group && r.version === v).map((r) => ({
          resource: r.plural,
          responseKind: { group: r.group, version: r.version, kind: r.kind },
          scope: r.namespaced ? 'Namespaced' : 'Cluster',
          singularResource: r.singular,
          verbs: verbs(r),
          ...(r.shortNames.length > 0 ? { shortNames: r.shortNames } : {}),
          ...(r.categories.length > 0 ? { categories: r.categories } : {}),
          ...(subresources(r).length > 0 ? { subresources: subresources(r) } : {}),
        })),
      })),
    })),
  };
}
