// Tables of the kinds the bench stores without acting on them: Services, Secrets, Leases, RBAC bindings, ...
import { column, ageOf, nameOf, namedAged, NAME_COLUMN, AGE_COLUMN, type Printer } from './printer.js';
import { at, formatLabels, isRecord, list, num, rec, str, type Json } from './fields.js';
import { formatLabelSelector } from './label-selector.js';
import { quantityString } from '../../../util/quantity.js';

function containerCells(podSpec: unknown): [string, string] {
  const containers = list(podSpec, 'containers');
  return [containers.map((c) => str(c, 'name')).join(','), containers.map((c) => str(c, 'image')).join(',')];
}

function intOrString(v: unknown): string {
  return typeof v === 'number' ? String(v) : typeof v === 'string' ? v : 'N/A';
}

function countKeys(v: unknown): number {
  return isRecord(v) ? Object.keys(v).length : 0;
}

/** Every LoadBalancer ingress IP (else hostname), sorted and without duplicates: a sets.String list. */
function loadBalancerAddresses(svc: Json): string[] {
  const out = new Set<string>();
  for (const i of list(svc, 'status', 'loadBalancer', 'ingress')) {
    const a = str(i, 'ip') || str(i, 'hostname');
    if (a !== '') out.add(a);
  }
  return [...out].sort();
}

/**
 * The EXTERNAL-IP cell. The server prints wide, so load-balancer addresses are never cut.
 * A Service written without a type (the API server would default ClusterIP) reads as ClusterIP.
 */
function externalIP(svc: Json): string {
  const external = list(svc, 'spec', 'externalIPs').map(String);
  switch (str(svc, 'spec', 'type') || 'ClusterIP') {
    case 'ClusterIP':
    case 'NodePort':
      return external.length > 0 ? external.join(',') : '<none>';
    case 'LoadBalancer': {
      const all = [...loadBalancerAddresses(svc), ...external];
      return all.length > 0 ? all.join(',') : '<pending>';
    }
    case 'ExternalName':
      return str(svc, 'spec', 'externalName');
    default:
      return '<unknown>';
  }
}

function servicePorts(svc: Json): string {
  const ports = list(svc, 'spec', 'ports').map((p) => {
    // TCP is the API server's default protocol; an object written without one still reads as TCP.
    const protocol = str(p, 'protocol') || 'TCP';
    const nodePort = num(p, 'nodePort');
    return nodePort > 0 ? `${num(p, 'port')}:${nodePort}/${protocol}` : `${num(p, 'port')}/${protocol}`;
  });
  return ports.length > 0 ? ports.join(',') : '<none>';
}

const SERVICE_PRINTER: Printer = {
  columns: [
    NAME_COLUMN,
    column('Type', 'string', 'How the service is exposed.'),
    column('Cluster-IP', 'string', 'The service\'s cluster IP.'),
    column('External-IP', 'string', 'Addresses the service is reachable on from outside.'),
    column('Port(s)', 'string', 'The service\'s ports.'),
    AGE_COLUMN,
    column('Selector', 'string', 'The labels of the pods the service routes to.', 1),
  ],
  row(svc, now) {
    return {
      cells: [
        nameOf(svc), str(svc, 'spec', 'type') || 'ClusterIP', String(list(svc, 'spec', 'clusterIPs')[0] ?? '') || '<none>',
        externalIP(svc), servicePorts(svc), ageOf(svc, now), formatLabels(at(svc, 'spec', 'selector')),
      ],
    };
  },
};

/** formatEndpoints: up to three ip:port pairs, then "+ N more...". */
function endpointsText(ep: Json): string {
  const subsets = list(ep, 'subsets');
  if (subsets.length === 0) return '<none>';
  const shown: string[] = [];
  let count = 0;
  let more = false;
  const add = (s: string): void => {
    if (shown.length === 3) more = true;
    else shown.push(s);
  };
  for (const ss of subsets) {
    const addresses = list(ss, 'addresses');
    const ports = list(ss, 'ports');
    if (ports.length === 0) {
      count += addresses.length;
      for (const a of addresses) add(str(a, 'ip'));
      continue;
    }
    for (const p of ports) {
      count += addresses.length;
      for (const a of addresses) {
        const ip = str(a, 'ip');
        add(ip.includes(':') ? `[${ip}]:${num(p, 'port')}` : `${ip}:${num(p, 'port')}`);
      }
    }
  }
  return more ? `${shown.join(',')} + ${count - 3} more...` : shown.join(',');
}

function ingressHosts(ing: Json): string {
  const rules = list(ing, 'spec', 'rules');
  const shown: string[] = [];
  let more = false;
  for (const r of rules) {
    // "more" means a rule came after three hosts were listed, whether or not it names a host.
    if (shown.length === 3) more = true;
    if (!more && str(r, 'host') !== '') shown.push(str(r, 'host'));
  }
  if (shown.length === 0) return '*';
  return more ? `${shown.join(',')} + ${rules.length - 3} more...` : shown.join(',');
}

function subjects(binding: Json): [string, string, string] {
  const users: string[] = [];
  const groups: string[] = [];
  const sas: string[] = [];
  for (const s of list(binding, 'subjects')) {
    const kind = str(s, 'kind');
    if (kind === 'User') users.push(str(s, 'name'));
    else if (kind === 'Group') groups.push(str(s, 'name'));
    else if (kind === 'ServiceAccount') sas.push(`${str(s, 'namespace')}/${str(s, 'name')}`);
  }
  return [users.join(', '), groups.join(', '), sas.join(', ')];
}

function bindingPrinter(what: string): Printer {
  return namedAged(
    [column('Role', 'string', `The role the ${what} grants.`)],
    (b) => [`${str(b, 'roleRef', 'kind')}/${str(b, 'roleRef', 'name')}`],
    [
      column('Users', 'string', `Users in the ${what}.`, 1),
      column('Groups', 'string', `Groups in the ${what}.`, 1),
      column('ServiceAccounts', 'string', `Service accounts in the ${what}.`, 1),
    ],
    (b) => subjects(b),
  );
}

/** One HPA metric as "current/target", the way formatHPAMetrics writes it. */
function hpaMetric(spec: unknown, status: unknown): string {
  const value = (v: unknown): string => quantityString(v);
  const target = (src: string): Json => rec(spec, src, 'target');
  const current = (src: string): Json => rec(status, src, 'current');
  const hasStatus = (src: string): boolean => isRecord(at(status, src));
  switch (str(spec, 'type')) {
    case 'External':
    case 'Object': {
      const src = str(spec, 'type') === 'External' ? 'external' : 'object';
      if (target(src)['averageValue'] !== undefined) {
        const cur = hasStatus(src) && current(src)['averageValue'] !== undefined ? value(current(src)['averageValue']) : '<unknown>';
        return `${cur}/${value(target(src)['averageValue'])} (avg)`;
      }
      const cur = hasStatus(src) ? value(current(src)['value']) : '<unknown>';
      return `${cur}/${value(target(src)['value'])}`;
    }
    case 'Pods': {
      const cur = hasStatus('pods') ? value(current('pods')['averageValue']) : '<unknown>';
      return `${cur}/${value(target('pods')['averageValue'])}`;
    }
    case 'Resource':
    case 'ContainerResource': {
      const src = str(spec, 'type') === 'Resource' ? 'resource' : 'containerResource';
      const name = str(spec, src, 'name');
      if (target(src)['averageValue'] !== undefined) {
        const cur = hasStatus(src) ? value(current(src)['averageValue']) : '<unknown>';
        return `${name}: ${cur}/${value(target(src)['averageValue'])}`;
      }
      const util = current(src)['averageUtilization'];
      const cur = hasStatus(src) && typeof util === 'number' ? `${util}%` : '<unknown>';
      const t = target(src)['averageUtilization'];
      return `${name}: ${cur}/${typeof t === 'number' ? `${t}%` : '<auto>'}`;
    }
    default:
      return '<unknown type>';
  }
}

function hpaTargets(hpa: Json): string {
  const specs = list(hpa, 'spec', 'metrics');
  if (specs.length === 0) return '<none>';
  const statuses = list(hpa, 'status', 'currentMetrics');
  const all = specs.map((s, i) => hpaMetric(s, statuses[i]));
  return all.length > 2 ? `${all.slice(0, 2).join(', ')} + ${all.length - 2} more...` : all.join(', ');
}

/** ResourceQuota: "name: used/hard" per resource, sorted, split into requests and limits.* columns. */
function quotaCells(q: Json): [string, string] {
  const hard = rec(q, 'status', 'hard');
  const used = rec(q, 'status', 'used');
  const requests: string[] = [];
  const limits: string[] = [];
  for (const r of Object.keys(hard).sort()) {
    const text = `${r}: ${used[r] === undefined ? '0' : quantityString(used[r])}/${quantityString(hard[r])}`;
    (r.split('.').length > 1 && r.split('.')[0] === 'limits' ? limits : requests).push(text);
  }
  return [requests.join(', '), limits.join(', ')];
}

export const CORE_PRINTERS: Record<string, Printer> = {
  // A namespace written without a phase reads Active: the phase the API server gives a new one.
  Namespace: namedAged([column('Status', 'string', 'Active, or Terminating.')], (ns) => [str(ns, 'status', 'phase') || 'Active']),
  Service: SERVICE_PRINTER,
  Endpoints: namedAged([column('Endpoints', 'string', 'Addresses and ports behind the service.')], (ep) => [endpointsText(ep)]),
  ConfigMap: namedAged([column('Data', 'string', 'Number of keys.')], (cm) => [countKeys(cm['data']) + countKeys(cm['binaryData'])]),
  // Opaque is the type the API server gives a Secret written without one.
  Secret: namedAged([column('Type', 'string', 'The secret\'s type.'), column('Data', 'string', 'Number of keys.')], (s) => [str(s, 'type') || 'Opaque', countKeys(s['data'])]),
  ServiceAccount: namedAged([column('Secrets', 'string', 'Number of secrets listed.')], (sa) => [list(sa, 'secrets').length]),
  ResourceQuota: {
    columns: [NAME_COLUMN, column('Request', 'string', 'Used and hard request quotas.'), column('Limit', 'string', 'Used and hard limit quotas.'), AGE_COLUMN],
    row: (q, now) => ({ cells: [nameOf(q), ...quotaCells(q), ageOf(q, now)] }),
  },
  Lease: namedAged([column('Holder', 'string', 'Who holds the lease.')], (l) => [str(l, 'spec', 'holderIdentity')]),
  NetworkPolicy: namedAged([column('Pod-Selector', 'string', 'The pods the policy applies to.')], (np) => [formatLabelSelector(rec(np, 'spec', 'podSelector'))]),
  Ingress: {
    columns: [
      NAME_COLUMN, column('Class', 'string', 'The ingress class.'), column('Hosts', 'string', 'Hosts the rules match.'),
      column('Address', 'string', 'Load-balancer addresses.'), column('Ports', 'string', 'Ports served.'), AGE_COLUMN,
    ],
    row(ing, now) {
      const className = at(ing, 'spec', 'ingressClassName');
      const addresses = new Set<string>();
      for (const i of list(ing, 'status', 'loadBalancer', 'ingress')) {
        const a = str(i, 'ip') || str(i, 'hostname');
        if (a !== '') addresses.add(a);
      }
      return {
        cells: [
          nameOf(ing), typeof className === 'string' ? className : '<none>', ingressHosts(ing), [...addresses].sort().join(','),
          list(ing, 'spec', 'tls').length > 0 ? '80, 443' : '80', ageOf(ing, now),
        ],
      };
    },
  },
  IngressClass: namedAged(
    [column('Controller', 'string', 'The controller that implements the class.'), column('Parameters', 'string', 'Extra configuration for the class.')],
    (ic) => {
      const p = at(ic, 'spec', 'parameters');
      if (!isRecord(p)) return [str(ic, 'spec', 'controller'), '<none>'];
      const group = typeof p['apiGroup'] === 'string' ? `.${p['apiGroup']}` : '';
      return [str(ic, 'spec', 'controller'), `${str(p, 'kind')}${group}/${str(p, 'name')}`];
    },
  ),
  PodDisruptionBudget: namedAged(
    [
      column('Min Available', 'string', 'Pods that must stay available.'), column('Max Unavailable', 'string', 'Pods that may be unavailable.'),
      column('Allowed Disruptions', 'integer', 'Pods that may be disrupted now.'),
    ],
    (pdb) => [intOrString(at(pdb, 'spec', 'minAvailable')), intOrString(at(pdb, 'spec', 'maxUnavailable')), num(pdb, 'status', 'disruptionsAllowed')],
  ),
  RoleBinding: bindingPrinter('role binding'),
  ClusterRoleBinding: bindingPrinter('cluster role binding'),
  HorizontalPodAutoscaler: namedAged(
    [
      column('Reference', 'string', 'The scaled object.'), column('Targets', 'string', 'Current and target metric values.'),
      column('MinPods', 'string', 'Lowest replica count.'), column('MaxPods', 'string', 'Highest replica count.'),
      column('Replicas', 'string', 'Current replica count.'),
    ],
    (h) => {
      const min = at(h, 'spec', 'minReplicas');
      return [
        `${str(h, 'spec', 'scaleTargetRef', 'kind')}/${str(h, 'spec', 'scaleTargetRef', 'name')}`, hpaTargets(h),
        typeof min === 'number' ? String(min) : '<unset>', num(h, 'spec', 'maxReplicas'), num(h, 'status', 'currentReplicas'),
      ];
    },
  ),
  PriorityClass: {
    columns: [
      NAME_COLUMN, column('Value', 'integer', 'The priority value.'), column('Global-Default', 'boolean', 'Whether pods without a class get this one.'),
      AGE_COLUMN, column('PreemptionPolicy', 'string', 'Whether pods of the class preempt others.'),
    ],
    row: (pc, now) => ({ cells: [nameOf(pc), num(pc, 'value'), at(pc, 'globalDefault') === true, ageOf(pc, now), str(pc, 'preemptionPolicy')] }),
  },
  StatefulSet: namedAged(
    [column('Ready', 'string', 'Ready replicas out of desired.')],
    // 1 is the replica count the API server gives a StatefulSet written without one.
    (s) => [`${num(s, 'status', 'readyReplicas')}/${typeof at(s, 'spec', 'replicas') === 'number' ? num(s, 'spec', 'replicas') : 1}`],
    [column('Containers', 'string', 'Container names in the pod template.', 1), column('Images', 'string', 'Container images in the pod template.', 1)],
    (s) => containerCells(at(s, 'spec', 'template', 'spec')),
  ),
};
