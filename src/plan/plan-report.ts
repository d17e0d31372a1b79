// A plan's answer for people (tables) and for programs (JSON): nodes needed per group, capacity left per group and pool, and the pods that fit nowhere with their claims and the first reason per group.
import Table from 'cli-table3';
import { humanBytes } from '../util/quantity.js';
import { availableBytes, emptyCapacityBytes } from './paper-pool.js';
import type { PlanOutcome, UnplacedPod } from './planner.js';
import type { VerifyReport } from './plan-verify.js';

export interface PoolReport {
  name: string;
  backend: string;
  /** What one fresh node's pool offers (GetCapacity's available_capacity when empty). */
  perNodeBytes: number;
  /** Over the group's planned nodes. */
  capacityBytes: number;
  allocatedBytes: number;
  freeBytes: number;
  volumes: number;
}

export interface GroupReport {
  name: string;
  template: string;
  max: number | null;
  nodes: number;
  pods: number;
  pools: PoolReport[];
}

export interface PlanReport {
  scoring: string;
  pods: { total: number; placed: number; unplaced: number };
  groups: GroupReport[];
  nodes: { name: string; group: string; pods: number; pools: { name: string; allocatedBytes: number; freeBytes: number; volumes: number }[] }[];
  unplaced: UnplacedPod[];
  /** Objects of kinds the plan does not read, by kind. */
  ignored: Record<string, number>;
  /** With --verify: the sample run with real drivers, and how it differed. */
  verify?: VerifyReport;
}

export function planReport(outcome: PlanOutcome, ignored: Record<string, number>): PlanReport {
  const groups = outcome.groups.map((g): GroupReport => ({
    name: g.name,
    template: g.file,
    max: g.max ?? null,
    nodes: g.nodes.length,
    pods: g.nodes.reduce((n, node) => n + node.usage.pods, 0),
    pools: g.template.pools.map((pool, i): PoolReport => {
      const perNode = emptyCapacityBytes(pool);
      const allocated = g.nodes.reduce((n, node) => n + node.allocated[i]!, 0);
      return {
        name: pool.shape.config.name,
        backend: pool.shape.config.backend,
        perNodeBytes: perNode,
        capacityBytes: perNode * g.nodes.length,
        allocatedBytes: allocated,
        freeBytes: g.nodes.reduce((n, node) => n + availableBytes(pool, node.allocated[i]!), 0),
        volumes: g.nodes.reduce((n, node) => n + node.volumes[i]!, 0),
      };
    }),
  }));
  const nodes = outcome.groups.flatMap((g) => g.nodes).sort((a, b) => a.index - b.index).map((node) => ({
    name: node.name,
    group: node.group.name,
    pods: node.usage.pods,
    pools: node.pools.map((pool, i) => ({ name: pool.shape.config.name, allocatedBytes: node.allocated[i]!, freeBytes: availableBytes(pool, node.allocated[i]!), volumes: node.volumes[i]! })),
  }));
  const placed = outcome.placements.size;
  return {
    scoring: outcome.scoring,
    pods: { total: placed + outcome.unplaced.length, placed, unplaced: outcome.unplaced.length },
    groups,
    nodes,
    unplaced: outcome.unplaced,
    ignored,
  };
}

function table(head: string[], rows: string[][]): string {
  const t = new Table({ head, style: { head: [], border: [], compact: true } });
  for (const r of rows) t.push(r);
  return t.toString();
}

/** The tables: groups and pools, then the pods that fit nowhere (one row per pod and group). */
export function renderPlan(r: PlanReport): string {
  const parts: string[] = [];
  parts.push(`Plan: ${r.pods.placed} of ${r.pods.total} pods placed on ${r.nodes.length} node(s); storage scoring: ${r.scoring}`);
  const rows: string[][] = [];
  for (const g of r.groups) {
    g.pools.forEach((p, i) => {
      rows.push([
        i === 0 ? g.name : '', i === 0 ? String(g.nodes) : '', i === 0 ? (g.max === null ? '-' : String(g.max)) : '', i === 0 ? String(g.pods) : '',
        p.name, humanBytes(p.perNodeBytes), String(p.volumes), humanBytes(p.allocatedBytes), humanBytes(p.freeBytes),
      ]);
    });
  }
  parts.push(table(['GROUP', 'NODES', 'MAX', 'PODS', 'POOL', 'PER NODE', 'VOLUMES', 'USED', 'FREE'], rows));
  if (r.unplaced.length > 0) {
    parts.push(`Pods that fit nowhere (${r.unplaced.length})`);
    const podRows: string[][] = [];
    for (const u of r.unplaced) {
      const claims = u.claims.length === 0 ? '-' : u.claims.map((c) => `${c.name} ${c.requestBytes === undefined ? '(no size)' : humanBytes(c.requestBytes)} ${c.storageClass || '(no class)'}`).join('\n');
      u.reasons.forEach((reason, i) => podRows.push([i === 0 ? u.pod : '', i === 0 ? claims : '', reason.group, reason.reason]));
    }
    parts.push(table(['POD', 'CLAIMS', 'GROUP', 'FIRST REASON'], podRows));
  }
  const ignored = Object.entries(r.ignored);
  if (ignored.length > 0) parts.push(`Not read (they place nothing): ${ignored.map(([k, n]) => `${n} ${k}`).join(', ')}`);
  const v = r.verify;
  if (v !== undefined) {
    parts.push(`Verified with real drivers on ${v.nodes.length} node(s) (${v.nodes.join(', ') || 'none'}), ${v.pods} pod(s): ${v.differences.length === 0 ? 'no difference' : `${v.differences.length} difference(s)`}${v.placedElsewhere > 0 ? `; ${v.placedElsewhere} pod(s) placed on another sample node (ties are broken at random there)` : ''}`);
    for (const d of v.differences) parts.push(`  ${d}`);
  }
  return parts.join('\n') + '\n';
}
