// The final tables: pods and where they run, claims and their volumes, pools per node, capacity objects, metrics.
import Table from 'cli-table3';
import type { RunResult } from '../scenario/run-result.js';
import { humanBytes } from '../api/quantity.js';
import { formatDuration } from '../clock/virtual-clock.js';

function table(head: string[], rows: string[][]): string {
  const t = new Table({ head, style: { head: [], border: [], compact: true } });
  for (const r of rows) t.push(r);
  return t.toString();
}

function bytes(n: number): string {
  return Number.isNaN(n) ? '?' : humanBytes(n);
}

export function renderTables(r: RunResult): string {
  const parts: string[] = [];
  parts.push('Pods');
  parts.push(table(['POD', 'NODE', 'PHASE', 'ATTEMPTS', 'WHY NOT RUNNING'], r.pods.map((p) => [p.name, p.node || '-', p.phase, String(p.attempts), p.reason.length > 90 ? p.reason.slice(0, 87) + '...' : p.reason])));
  parts.push('Claims');
  parts.push(table(['PVC', 'PHASE', 'CLASS', 'PV', 'NODE', 'SIZE'], r.claims.map((c) => [c.name, c.phase, c.storageClass, c.volume || '-', c.node || '-', c.size])));
  if (r.volumes.some((v) => v.phase !== 'Bound')) {
    parts.push('Volumes not bound');
    parts.push(table(['PV', 'PHASE', 'CLAIM', 'NODE', 'SIZE', 'RECLAIM'], r.volumes.filter((v) => v.phase !== 'Bound').map((v) => [v.name, v.phase, v.claim || '-', v.node || '-', v.size, v.reclaimPolicy])));
  }
  parts.push('Pools (from the drivers at the end of the run)');
  parts.push(table(['NODE', 'POOL', 'CAPACITY', 'ALLOCATED', 'FREE'], r.pools.map((p) => [p.node, p.pool, bytes(p.capacityBytes), bytes(p.allocatedBytes), bytes(p.freeBytes)])));
  if (r.capacities.length > 0) {
    parts.push('CSIStorageCapacity objects');
    parts.push(table(['NAME', 'CLASS', 'NODE', 'CAPACITY', 'MAX VOLUME'], r.capacities.map((c) => [c.name, c.storageClass, c.node, c.capacity, c.maximumVolumeSize || '-'])));
  }
  return parts.join('\n');
}

export function renderMetrics(r: RunResult): string {
  const m = r.metrics;
  const failures = Object.entries(m.provisioningFailuresByCode).map(([k, v]) => `${k}=${v}`).join(', ') || 'none';
  const maxAttempts = Math.max(0, ...Object.values(m.schedulingAttempts));
  const lines = [
    `scheduling attempts: ${m.totalSchedulingAttempts} for ${Object.keys(m.schedulingAttempts).length} pods (max ${maxAttempts} for one pod)`,
    `provisioning failures by code: ${failures}`,
    `volumes provisioned: ${m.volumesProvisioned}, deleted: ${m.volumesDeleted}; mount checks passed: ${m.mountChecksPassed}, failed: ${m.mountChecksFailed}`,
    `pods stuck: ${m.podsStuck.length}${m.podsStuck.map((s) => `\n  ${s.pod}: ${s.reason}`).join('')}`,
    `time: settled at +${formatDuration(m.settledVirtualMs)} virtual (run ended at +${formatDuration(m.virtualMs)}), ${(m.wallMs / 1000).toFixed(1)} s wall`,
    `events: ${m.events} (${m.eventsPerWallSecond.toFixed(1)}/s wall), reconciles: ${m.reconciles}, peak RSS ${humanBytes(m.peakRssBytes)}`,
  ];
  if (r.unmodelledFields.length > 0) lines.push(`fields not modelled (ignored): ${r.unmodelledFields.length}${r.unmodelledFields.map((f) => `\n  ${f}`).join('')}`);
  if (r.controllerErrors.length > 0) lines.push(`controller errors: ${r.controllerErrors.length}${r.controllerErrors.slice(0, 10).map((f) => `\n  ${f}`).join('')}`);
  if (r.teardownProblems.length > 0) lines.push(`teardown problems: ${r.teardownProblems.map((f) => `\n  ${f}`).join('')}`);
  return lines.join('\n');
}
