// The node table: STATUS from the Ready condition, ROLES from node-role labels, the OS and runtime only with -o wide.
import { column, ageOf, nameOf, NAME_COLUMN, AGE_COLUMN, type Printer } from './printer.js';
import { at, isRecord, list, rec, str, type Json } from './fields.js';

const ROLE_PREFIX = 'node-role.kubernetes.io/';
const ROLE_LABEL = 'kubernetes.io/role';

const COLUMNS = [
  NAME_COLUMN,
  column('Status', 'string', 'Whether the node is Ready, and whether it takes new pods.'),
  column('Roles', 'string', 'Roles from the node\'s role labels.'),
  AGE_COLUMN,
  column('Version', 'string', 'The kubelet version the node reports.'),
  column('Internal-IP', 'string', 'The node\'s first InternalIP address.', 1),
  column('External-IP', 'string', 'The node\'s first ExternalIP address.', 1),
  column('OS-Image', 'string', 'The OS image the node reports.', 1),
  column('Kernel-Version', 'string', 'The kernel version the node reports.', 1),
  column('Container-Runtime', 'string', 'The container runtime and version the node reports.', 1),
];

/** Roles, sorted and without duplicates: `node-role.kubernetes.io/<role>` keys and `kubernetes.io/role` values. */
export function nodeRoles(node: Json): string[] {
  const roles = new Set<string>();
  for (const [k, v] of Object.entries(rec(node, 'metadata', 'labels'))) {
    if (k.startsWith(ROLE_PREFIX) && k.length > ROLE_PREFIX.length) roles.add(k.slice(ROLE_PREFIX.length));
    else if (k === ROLE_LABEL && typeof v === 'string' && v !== '') roles.add(v);
  }
  return [...roles].sort();
}

function address(node: Json, type: string): string {
  const a = list(node, 'status', 'addresses').find((x) => str(x, 'type') === type);
  return a === undefined ? '<none>' : str(a, 'address');
}

export const NODE_PRINTER: Printer = {
  columns: COLUMNS,
  row(node, now) {
    const status: string[] = [];
    // Only Ready counts; the last Ready condition listed wins, as the printer's map does.
    const ready = list(node, 'status', 'conditions').filter((c) => str(c, 'type') === 'Ready').pop();
    if (ready !== undefined) status.push(str(ready, 'status') === 'True' ? 'Ready' : 'NotReady');
    else status.push('Unknown');
    if (at(node, 'spec', 'unschedulable') === true) status.push('SchedulingDisabled');
    const roles = nodeRoles(node).join(',') || '<none>';
    const info = at(node, 'status', 'nodeInfo');
    const infoField = (f: string): string => (isRecord(info) ? str(info, f) : '');
    return {
      cells: [
        nameOf(node), status.join(','), roles, ageOf(node, now), infoField('kubeletVersion'),
        address(node, 'InternalIP'), address(node, 'ExternalIP'),
        infoField('osImage') || '<unknown>', infoField('kernelVersion') || '<unknown>', infoField('containerRuntimeVersion') || '<unknown>',
      ],
    };
  },
};
