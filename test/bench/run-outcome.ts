// Test support: the outcome of a bench run with what may differ between re-enacted and real sidecars taken out (generated names, timing, the sidecars' own pods and Leases), for the differential test.
import type { RunResult } from '../../src/bench/scenario/run-result.js';

export interface Outcome {
  pods: string[];
  nodes: string[];
  claims: string[];
  volumes: string[];
  capacities: string[];
  snapshots: string[];
  eventReasons: string[];
}

/** The sidecars' own namespace: their Pods and Leases exist only when they are real. */
const SIDECAR_NAMESPACE = 'lode-system';

/** An Event a client created through the API, as the run logs it: "create events NS/NAME by CLIENT: TYPE REASON on KIND/NAME: ...". */
const CLIENT_EVENT = /^create events (\S+)\/\S+ by [^:]+: (Normal|Warning) (\S+) on (\S+?)\//;

/** Reasons that say how a component works, not what happened to the workload. */
const BOOKKEEPING = new Set(['ApiWrite', 'Mark', 'LeaderElection']);

export function outcome(r: RunResult): Outcome {
  const pods = r.pods.filter((p) => !p.name.startsWith(`${SIDECAR_NAMESPACE}/`));
  const claimOf = new Map(r.volumes.map((v) => [v.name, v.claim]));
  const reasons = new Set<string>();
  for (const e of r.events) {
    if (e.namespace === SIDECAR_NAMESPACE) continue;
    const m = e.reason === 'ApiWrite' ? CLIENT_EVENT.exec(e.message) : null;
    if (m !== null) {
      if (m[1] !== SIDECAR_NAMESPACE && !BOOKKEEPING.has(m[3]!)) reasons.add(`${m[3]} ${m[4]}`);
      continue;
    }
    if (!BOOKKEEPING.has(e.reason)) reasons.add(`${e.reason} ${e.kind}`);
  }
  return {
    pods: pods.map((p) => `${p.name} ${p.phase}${p.terminating ? ' terminating' : ''} on ${p.node || '-'}`).sort(),
    nodes: [...new Set([...r.pools.map((p) => p.node), ...r.pods.map((p) => p.node).filter((n) => n !== '')])].sort(),
    claims: r.claims.map((c) => `${c.name} ${c.phase} ${c.storageClass} ${c.size} on ${c.node || '-'}`).sort(),
    volumes: r.volumes.map((v) => `${claimOf.get(v.name) || v.name} ${v.phase} ${v.size} on ${v.node || '-'} ${v.reclaimPolicy}`).sort(),
    capacities: r.capacities.map((c) => `${c.node} ${c.storageClass} ${c.capacity} max ${c.maximumVolumeSize || '-'}`).sort(),
    snapshots: r.snapshots.map((s) => `${s.name} of ${s.source} ready=${s.ready} ${s.restoreSize} on ${s.node || '-'}${s.error ? ` error ${s.error}` : ''}`).sort(),
    eventReasons: [...reasons].sort(),
  };
}

/** Field by field, what only one run has. */
export function differences(a: Outcome, b: Outcome): string[] {
  const out: string[] = [];
  for (const k of Object.keys(a) as (keyof Outcome)[]) {
    const onlyA = a[k].filter((x) => !b[k].includes(x));
    const onlyB = b[k].filter((x) => !a[k].includes(x));
    if (onlyA.length > 0 || onlyB.length > 0) out.push(`${k}: re-enacted only [${onlyA.join('; ')}], real only [${onlyB.join('; ')}]`);
  }
  return out;
}
