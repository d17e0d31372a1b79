// Test helper: the (group, resource, verb) triples RBAC roles grant, in one comparable string form.
import type { IClusterRole } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRole';
import type { IRole } from 'kubernetes-models/rbac.authorization.k8s.io/v1/Role';
import type { IPolicyRule } from 'kubernetes-models/rbac.authorization.k8s.io/v1/PolicyRule';
import type { Permission } from '../../src/driver/cluster/api-permissions.js';
import type { K8sObject } from './render.js';

/** "group/resource/verb", with "@ns" for a namespaced Role and "[names]" for a rule limited by name. */
export function grantKey(group: string, resource: string, verb: string, namespaced: boolean, names?: readonly string[]): string {
  return `${group}/${resource}/${verb}${namespaced ? '@ns' : ''}${names ? `[${names.join(',')}]` : ''}`;
}

/** Every grant of the ClusterRoles and Roles among `objects`. */
export function grants(objects: K8sObject[]): Set<string> {
  const out = new Set<string>();
  const add = (rules: IPolicyRule[] | undefined, namespaced: boolean) => {
    for (const r of rules ?? []) {
      for (const g of r.apiGroups ?? ['']) for (const res of r.resources ?? []) for (const v of r.verbs) {
        out.add(grantKey(g, res, v, namespaced, r.resourceNames));
      }
    }
  };
  for (const o of objects) {
    if (o.kind === 'ClusterRole') add((o as unknown as IClusterRole).rules, false);
    if (o.kind === 'Role') add((o as unknown as IRole).rules, true);
  }
  return out;
}

/** The grants a list of catalogue permissions asks for. */
export function permissionGrants(permissions: readonly Permission[]): Set<string> {
  return new Set(permissions.flatMap((p) => p.verbs.map((v) => grantKey(p.group, p.resource, v, p.scope === 'own-namespace', p.resourceNames))));
}
