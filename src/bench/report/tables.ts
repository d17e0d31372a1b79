// The final tables: pods and where they run, claims and their volumes, pools per node, capacity objects, metrics.
import Table from 'cli-table3';
import type { RunResult } from '../scenario/run-result.js';
import { humanBytes } from '../../util/quantity.js';
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
  parts.push(table(['POD', 'NODE', 'PHASE', 'ATTEMPTS', 'WHY NOT RUNNING'], r.pods.map((p) => [p.name, p.node || '-', p.terminating ? 'Terminating' : p.phase, String(p.attempts), p.reason.length > 90 ? p.reason.slice(0, 87) + '...' : p.reason])));
  parts.push('Claims');
  parts.push(table(['PVC', 'PHASE', 'CLASS', 'PV', 'NODE', 'SIZE'], r.claims.map((c) => [c.name, c.phase, c.storageClass, c.volume || '-', c.node || '-', c.size])));
  if (r.volumes.some((v) => v.phase !== 'Bound')) {
    parts.push('Volumes not bound');
    parts.push(table(['PV', 'PHASE', 'CLAIM', 'NODE', 'SIZE', 'RECLAIM'], r.volumes.filter((v) => v.phase !== 'Bound').map((v) => [v.name, v.phase, v.claim || '-', v.node || '-', v.size, v.reclaimPolicy])));
  }
  parts.push('Pools (from the drivers at the end of the run)');
  parts.push(table(['NODE', 'POOL', 'CAPACITY', 'ALLOCATED', 'FREE'], r.pools.map((p) => [p.node, p.pool, bytes(p.capacityBytes), bytes(p.allocatedBytes), bytes(p.freeBytes)])));
  if (r.snapshots.length > 0) {
    parts.push('VolumeSnapshots');
    parts.push(table(['SNAPSHOT', 'SOURCE', 'READY', 'RESTORE SIZE', 'NODE', 'SNAPSHOT HANDLE', 'ERROR'], r.snapshots.map((s) => [s.name, s.source, String(s.ready), s.restoreSize || '-', s.node || '-', s.handle || '-', s.error.length > 60 ? s.error.slice(0, 57) + '...' : s.error])));
  }
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
    `CPU to the end of the steps: bench process ${(m.cpu.benchMs / 1000).toFixed(1)} s, drivers ${(m.cpu.driversMs / 1000).toFixed(1)} s, whole machine ${(m.cpu.machineMs / 1000).toFixed(1)} s`,
  ];
  const stored = storedKindsText(r);
  if (stored !== '') lines.push(`kinds stored, not acted upon: ${stored}`);
  if (r.unmodelledFields.length > 0) lines.push(`fields not modelled (ignored): ${r.unmodelledFields.length}${r.unmodelledFields.map((f) => `\n  ${f}`).join('')}`);
  if (r.controllerErrors.length > 0) lines.push(`controller errors: ${r.controllerErrors.length}${r.controllerErrors.slice(0, 10).map((f) => `\n  ${f}`).join('')}`);
  if (r.teardownProblems.length > 0) lines.push(`teardown problems: ${r.teardownProblems.map((f) => `\n  ${f}`).join('')}`);
  return lines.join('\n');
}

/** "Service (2), ConfigMap (1)": the objects no controller acted on. */
function storedKindsText(r: RunResult): string {
  return Object.entries(r.storedKinds).map(([k, n]) => `${k} (${n})`).join(', ');
}

/** A few plain sentences on what happened, for people who skip the tables. */
/** Which component ran as what: the real binaries with their versions, grouped over nodes; the re-enacted ones with what they model. */
function componentLines(r: RunResult): string[] {
  const groups = new Map<string, string[]>();
  for (const c of r.components ?? []) {
    const key = `${c.implementation === 'real' ? 'real' : 're-enacted'} ${c.name} ${c.version}`;
    groups.set(key, [...(groups.get(key) ?? []), c.scope]);
  }
  const out = [...groups.entries()].map(([k, scopes]) => {
    const [impl, name, ...version] = k.split(' ');
    return `  ${name} (${scopes.join(', ')}): ${impl}, ${version.join(' ')}`;
  });
  if ((r.sidecarExits ?? []).length > 0) out.push(`  real sidecars restarted after an exit: ${r.sidecarExits.join('; ')}`);
  if ((r.sidecarExitsWithDriver ?? []).length > 0) out.push(`  real sidecars restarted after exiting with their killed driver: ${r.sidecarExitsWithDriver.join('; ')}`);
  return out.length === 0 ? [] : ['Components:', ...out];
}

export function renderSummary(r: RunResult): string {
  const m = r.metrics;
  const ev = (reason: string): number => r.events.filter((e) => e.reason === reason).length;
  const provisioners = new Set(r.events.filter((e) => e.reason === 'ProvisioningSucceeded').map((e) => e.source)).size;
  const running = r.pods.filter((p) => p.phase === 'Running' && !p.terminating).length;
  const lines = [
    `${running} of ${r.pods.length} pods running at the end; ${r.claims.filter((c) => c.phase === 'Bound').length} of ${r.claims.length} claims bound.`,
    r.sidecars === 'real'
      // The real provisioners' calls are not the bench's to count; the PVs they made are in the API.
      ? `${r.volumes.length} PV(s) at the end, made by the real csi-provisioner of each node (${new Set(r.volumes.map((v) => v.node).filter((n) => n !== '')).size} node(s)).`
      : `${m.volumesProvisioned} volume(s) provisioned by ${provisioners} ${r.provisioning === 'central' ? 'central provisioner' : 'node-local provisioner(s)'}, ${m.volumesDeleted} deleted again; ${Object.values(m.provisioningFailuresByCode).reduce((a, b) => a + b, 0)} provisioning failure(s).`,
    `${ev('FailedScheduling')} FailedScheduling event(s) (${r.events.filter((e) => e.reason === 'FailedScheduling' && e.message.includes('did not have enough free storage')).length} citing not enough free storage), ${ev('FailedMount')} FailedMount event(s); ${m.mountChecksPassed} mounted volume(s) passed the write/read and size check${m.mountChecksFailed > 0 ? `, ${m.mountChecksFailed} failed it` : ''}.`,
  ];
  // Only pods with several claims: there the count shows what all-or-nothing provisioning cost (scenario 04).
  for (const p of r.pods) {
    const per = Object.entries(p.createVolumeAttempts ?? {});
    if (per.length < 2) continue;
    const total = per.reduce((s, [, n]) => s + n, 0);
    lines.push(`Pod ${p.name} (${p.phase}${p.node ? ` on ${p.node}` : ''}): ${total} CreateVolume attempt(s) for its ${per.length} claims (${per.map(([c, n]) => `${c} ${n}`).join(', ')}), ${p.attempts} scheduling attempt(s).`);
  }
  if (m.podsStuck.length > 0) lines.push(`${m.podsStuck.length} pod(s) stuck (see "pods stuck" below).`);
  const stored = storedKindsText(r);
  if (stored !== '') lines.push(`Kinds stored, not acted upon: ${stored}.`);
  lines.push(...componentLines(r));
  lines.push(`Everything the run created was removed: ${r.teardownProblems.length === 0 ? 'yes' : 'see teardown problems'}.`);
  return lines.join('\n');
}
