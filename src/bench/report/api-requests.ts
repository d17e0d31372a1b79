// The run's API requests as the summary table: clients by verb, total, requests per pod.
import Table from 'cli-table3';
import type { Verb } from '../api/request-counts.js';
import type { RunResult } from '../scenario/run-result.js';

const VERBS: readonly Verb[] = ['list', 'watch', 'get', 'create', 'update', 'patch', 'delete'];

/** "kubelet@node-3" -> "kubelet@*": per-node instances of one component summed into one row. */
function family(client: string): string {
  const at = client.indexOf('@');
  return at < 0 ? client : `${client.slice(0, at)}@*`;
}

export function renderApiRequests(r: RunResult, top = 10): string {
  const rows = new Map<string, { instances: Set<string>; verbs: Map<Verb, number>; total: number }>();
  for (const c of r.apiRequests) {
    const f = family(c.client);
    const row = rows.get(f) ?? { instances: new Set<string>(), verbs: new Map<Verb, number>(), total: 0 };
    row.instances.add(c.client);
    row.verbs.set(c.verb, (row.verbs.get(c.verb) ?? 0) + c.count);
    row.total += c.count;
    rows.set(f, row);
  }
  const sorted = [...rows].sort((a, b) => b[1].total - a[1].total || a[0].localeCompare(b[0]));
  const t = new Table({ head: ['CLIENT', ...VERBS.map((v) => v.toUpperCase()), 'TOTAL'], style: { head: [], border: [], compact: true } });
  for (const [name, row] of sorted.slice(0, top)) {
    const label = row.instances.size > 1 ? `${name} (${row.instances.size})` : [...row.instances][0]!;
    t.push([label, ...VERBS.map((v) => String(row.verbs.get(v) ?? 0)), String(row.total)]);
  }
  const rest = sorted.slice(top);
  if (rest.length > 0) t.push([`${rest.length} more`, ...VERBS.map((v) => String(rest.reduce((n, [, row]) => n + (row.verbs.get(v) ?? 0), 0))), String(rest.reduce((n, [, row]) => n + row.total, 0))]);
  const a = r.apiRequestTotals;
  return [
    'API requests (as the upstream components would send them; informer reads are not requests)',
    t.toString(),
    `total ${a.total}: ${a.listWatch} list/watch, ${a.reads} get, ${a.writes} writes; ${a.perPod.toFixed(1)} per pod (${a.pods} pods)`,
  ].join('\n');
}
