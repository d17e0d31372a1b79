// `kubectl lode status`: per node, its pools as the capacity objects, PVs and the drivers' metrics show them, the driver's registration, health and version, lost nodes, and what the drivers warned about.
import type { CoreV1Event, V1CSINode, V1CSIStorageCapacity, V1Lease, V1Node, V1PersistentVolume, V1StorageClass } from '@kubernetes/client-node';
import { capacityNode, lostNodes, pinnedNode } from '../driver/cluster/node-loss/lost-nodes.js';
import { topologyKey } from '../driver/context/config.js';
import { PARAM_POOL } from '../driver/request/parameters.js';
import { EVENT_COMPONENT } from '../kube/node-events.js';
import type { PoolFigures } from './driver-figures.js';
import type { DriverScrapes } from './driver-scrape.js';
import type { Column } from './plugin-output.js';
import { bytesOf, showBytes } from './quantities.js';

export interface PoolRow {
  node: string;
  /** '' for a node where no capacity object of the driver was published. */
  pool: string;
  classes: string[];
  /** The free space the capacity objects report (what the scheduler compares claims with). */
  freeBytes: number | null;
  /** The largest volume each class may ask for here; the scheduler trusts it over the free space. */
  maximumBytes: Record<string, number | null>;
  /** The sizes of the driver's PVs on this node in this pool. */
  allocatedBytes: number;
  volumes: number;
  /** The pool as its driver's /metrics show it (backend, size, allocated, thin fill, quarantined); null when unknown. */
  driver: PoolFigures | null;
  /** The driver's version (its lode_build_info); null when unknown. */
  driverVersion: string | null;
  /** The driver pod's state: Ready, NotReady, a phase, "no pod", or "unknown" when its pods could not be read. */
  driverHealth: string;
  /** Ready, NotReady, lost (deleted), lost (out-of-service), unknown. */
  nodeState: string;
  /** Whether the node's CSINode lists the driver (kubelet registered its node plugin); null when the node has no CSINode. */
  driverRegistered: boolean | null;
  warnings: number;
}

export interface DriverWarning {
  node: string;
  reason: string;
  message: string;
  count: number;
  last: string | null;
}

export interface StatusReport {
  pools: PoolRow[];
  lostNodes: Array<{ name: string; signal: string }>;
  /** Classes for which no node reports any space: a pool of that name exists nowhere, or is full everywhere. */
  classesWithoutSpace: Array<{ storageClass: string; pool: string }>;
  warnings: DriverWarning[];
  /** The node running the node-loss handler (its Lease's holder), when the Lease exists. */
  nodeLossLeader: { holder: string; renewTime: string | null } | null;
  /** Which figures from the drivers' metrics are unknown where, and why; null when every driver answered. */
  driverNote: string | null;
}

export interface StatusInputs {
  driverName: string;
  nodes: readonly V1Node[];
  csiNodes: readonly V1CSINode[];
  classes: readonly V1StorageClass[];
  capacities: readonly V1CSIStorageCapacity[];
  pvs: readonly V1PersistentVolume[];
  events: readonly CoreV1Event[];
  lease: V1Lease | undefined;
  /** The drivers' pods and metrics (scrapeDrivers). */
  drivers: DriverScrapes;
}

/** The class's pool: its parameter, or "" when the class leaves it to the driver's first pool. */
export function classPool(c: V1StorageClass | undefined): string {
  return c?.parameters?.[PARAM_POOL] ?? '';
}

function nodeState(node: V1Node | undefined, lost: Map<string, string>, name: string): string {
  const signal = lost.get(name);
  if (signal !== undefined) return `lost (${signal})`;
  if (node === undefined) return 'unknown';
  const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
  const state = ready?.status === 'True' ? 'Ready' : 'NotReady';
  return node.spec?.unschedulable === true ? `${state},SchedulingDisabled` : state;
}

/** Per node with a CSINode: whether it lists the driver. */
export function registrations(csiNodes: readonly V1CSINode[], driverName: string): Map<string, boolean> {
  return new Map(csiNodes.map((c) => [c.metadata?.name ?? '', (c.spec?.drivers ?? []).some((d) => d.name === driverName)]));
}

/** Events written by the driver's node plugins and by its node-loss handler. */
export function isDriverEvent(e: CoreV1Event, driverName: string): boolean {
  const component = e.source?.component ?? e.reportingComponent ?? '';
  return component === EVENT_COMPONENT || component.startsWith(`${driverName}/`);
}

export function statusReport(i: StatusInputs): StatusReport {
  const key = topologyKey(i.driverName);
  const classByName = new Map(i.classes.map((c) => [c.metadata?.name ?? '', c]));
  const nodeByName = new Map(i.nodes.map((n) => [n.metadata?.name ?? '', n]));
  const named = new Set<string>();
  for (const pv of i.pvs) { const n = pinnedNode(pv, key); if (n !== undefined) named.add(n); }
  for (const c of i.capacities) { const n = capacityNode(c, key); if (n !== undefined) named.add(n); }
  const lost = lostNodes(named, i.nodes);
  const lostByName = new Map(lost.map((l) => [l.name, l.signal === 'deleted' ? 'deleted' : 'out-of-service']));
  const registered = registrations(i.csiNodes, i.driverName);
  const warnings = i.events.filter((e) => e.type === 'Warning' && isDriverEvent(e, i.driverName) && e.involvedObject?.kind === 'Node');
  const warningsOn = (node: string): number => warnings.filter((e) => e.involvedObject?.name === node).length;

  const driverOf = new Map(i.drivers.drivers.map((d) => [d.node, d]));
  // node -> pool -> row; the nodes: every Node with the driver registered or its pod, and every node the driver's objects name.
  const rows = new Map<string, Map<string, PoolRow>>();
  const rowFor = (node: string, pool: string): PoolRow => {
    const pools = rows.get(node) ?? new Map<string, PoolRow>();
    rows.set(node, pools);
    let row = pools.get(pool);
    if (row === undefined) {
      const d = driverOf.get(node);
      row = {
        node, pool, classes: [], freeBytes: null, maximumBytes: {}, allocatedBytes: 0, volumes: 0,
        driver: d?.figures?.pools[pool] ?? null, driverVersion: d?.figures?.version ?? null,
        driverHealth: d?.health ?? (i.drivers.podsListed ? 'no pod' : 'unknown'),
        nodeState: nodeState(nodeByName.get(node), lostByName, node), driverRegistered: registered.get(node) ?? null, warnings: warningsOn(node),
      };
      pools.set(pool, row);
    }
    return row;
  };
  const withSpace = new Set<string>();
  for (const c of i.capacities) {
    const node = capacityNode(c, key);
    const sc = classByName.get(c.storageClassName);
    if (node === undefined || sc === undefined) continue;
    const free = bytesOf(c.capacity) ?? 0;
    const maximum = bytesOf(c.maximumVolumeSize) ?? null;
    // The driver answers 0 and 0 for a pool the node does not have: no row for it here.
    if (free === 0 && (maximum ?? 0) === 0) continue;
    withSpace.add(c.storageClassName);
    const row = rowFor(node, classPool(sc));
    row.classes.push(c.storageClassName);
    row.freeBytes = Math.max(row.freeBytes ?? 0, free);
    row.maximumBytes[c.storageClassName] = maximum;
  }
  for (const pv of i.pvs) {
    const node = pinnedNode(pv, key);
    if (node === undefined) continue;
    const row = rowFor(node, pv.spec?.csi?.volumeAttributes?.[PARAM_POOL] ?? '');
    row.allocatedBytes += bytesOf(pv.spec?.capacity?.['storage']) ?? 0;
    row.volumes += 1;
  }
  // Pools no class names (so no capacity object) and no PV uses yet are still pools: the driver's metrics list them.
  for (const d of i.drivers.drivers) for (const pool of Object.keys(d.figures?.pools ?? {})) rowFor(d.node, pool);
  for (const node of [...[...registered].filter(([, yes]) => yes).map(([n]) => n), ...lost.map((l) => l.name), ...driverOf.keys()]) if (!rows.has(node)) rowFor(node, '');
  const pools = [...rows.values()].flatMap((m) => [...m.values()]);
  for (const r of pools) r.classes.sort();
  pools.sort((a, b) => a.node.localeCompare(b.node) || a.pool.localeCompare(b.pool));

  // One line per subject: the Events are folded per node, reason and message.
  const folded = new Map<string, DriverWarning>();
  for (const e of warnings) {
    const w: DriverWarning = { node: e.involvedObject?.name ?? '', reason: e.reason ?? '', message: e.message ?? '', count: e.count ?? 1, last: eventTime(e) };
    const k = `${w.node}\0${w.reason}\0${w.message}`;
    const seen = folded.get(k);
    if (seen === undefined) folded.set(k, w);
    else { seen.count += w.count; if ((w.last ?? '') > (seen.last ?? '')) seen.last = w.last; }
  }
  return {
    pools,
    lostNodes: lost.map((l) => ({ name: l.name, signal: l.signal })),
    classesWithoutSpace: i.classes.filter((c) => !withSpace.has(c.metadata?.name ?? '')).map((c) => ({ storageClass: c.metadata?.name ?? '', pool: classPool(c) })),
    warnings: [...folded.values()].sort((a, b) => a.node.localeCompare(b.node) || a.reason.localeCompare(b.reason) || a.message.localeCompare(b.message)),
    nodeLossLeader: i.lease === undefined ? null : { holder: i.lease.spec?.holderIdentity ?? '', renewTime: i.lease.spec?.renewTime !== undefined ? new Date(i.lease.spec.renewTime).toISOString() : null },
    driverNote: i.drivers.note,
  };
}

/** The Event's last time, whichever field its writer filled. */
export function eventTime(e: CoreV1Event): string | null {
  const t = e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp ?? e.metadata?.creationTimestamp;
  return t === undefined ? null : new Date(t).toISOString();
}

const UNKNOWN = '<unknown>';
/** A figure the driver's metrics give: "<unknown>" when its metrics could not be read, "-" when the driver exports none (thin fill of a pool that is not thin). */
const fromDriver = (r: PoolRow, show: (d: PoolFigures) => string | undefined): string => (r.driver === null ? UNKNOWN : show(r.driver) ?? '-');
const bytes = (v: number | null): string | undefined => (v === null ? undefined : showBytes(v));
const percent = (v: number | null): string | undefined => (v === null ? undefined : `${Math.round(v * 1000) / 10}%`);

export const POOL_COLUMNS: readonly Column<PoolRow>[] = [
  { header: 'NODE', cell: (r) => r.node },
  { header: 'STATE', cell: (r) => r.nodeState, colour: (r) => (r.nodeState === 'Ready' ? undefined : r.nodeState.startsWith('lost') ? 'red' : 'yellow') },
  { header: 'DRIVER', cell: (r) => (r.driverRegistered === null ? '<no csinode>' : r.driverRegistered ? 'registered' : 'not registered'), colour: (r) => (r.driverRegistered === false ? 'red' : undefined) },
  { header: 'HEALTH', cell: (r) => (r.driverHealth === 'unknown' ? UNKNOWN : r.driverHealth === 'no pod' ? '<no pod>' : r.driverHealth), colour: (r) => (r.driverHealth === 'Ready' || r.driverHealth === 'unknown' ? undefined : 'red') },
  { header: 'VERSION', cell: (r) => r.driverVersion ?? UNKNOWN },
  { header: 'POOL', cell: (r) => r.pool || '<none published>' },
  { header: 'BACKEND', cell: (r) => (r.pool === '' ? '-' : fromDriver(r, (d) => d.backend || undefined)) },
  { header: 'SIZE', cell: (r) => (r.pool === '' ? '-' : fromDriver(r, (d) => bytes(d.sizeBytes))) },
  { header: 'ALLOCATED', cell: (r) => (r.pool === '' ? '-' : fromDriver(r, (d) => bytes(d.allocatedBytes))) },
  { header: 'FREE', cell: (r) => showBytes(r.freeBytes ?? undefined) },
  { header: 'VOLUMES', cell: (r) => String(r.volumes) },
  { header: 'LARGEST', cell: (r) => { const m = Object.values(r.maximumBytes).filter((v): v is number => v !== null); return m.length > 0 ? showBytes(Math.max(...m)) : '-'; } },
  { header: 'QUARANTINED', cell: (r) => (r.pool === '' ? '-' : fromDriver(r, (d) => (d.quarantinedVolumes === null ? undefined : String(d.quarantinedVolumes)))), colour: (r) => ((r.driver?.quarantinedVolumes ?? 0) > 0 ? 'red' : undefined) },
  { header: 'WARNINGS', cell: (r) => String(r.warnings), colour: (r) => (r.warnings > 0 ? 'yellow' : undefined) },
  { header: 'IN-PVS', wide: true, cell: (r) => showBytes(r.allocatedBytes) },
  { header: 'THIN-DATA', wide: true, cell: (r) => (r.pool === '' ? '-' : fromDriver(r, (d) => percent(d.thinDataUsed))) },
  { header: 'THIN-META', wide: true, cell: (r) => (r.pool === '' ? '-' : fromDriver(r, (d) => percent(d.thinMetadataUsed))) },
  { header: 'CLASSES', wide: true, cell: (r) => r.classes.map((c) => `${c}(largest ${r.maximumBytes[c] === null || r.maximumBytes[c] === undefined ? '-' : showBytes(r.maximumBytes[c] ?? undefined)})`).join(',') || '<none>' },
];

export const WARNING_COLUMNS: readonly Column<DriverWarning>[] = [
  { header: 'NODE', cell: (w) => w.node },
  { header: 'REASON', cell: (w) => w.reason, colour: () => 'yellow' },
  { header: 'COUNT', wide: true, cell: (w) => String(w.count) },
  { header: 'LAST', wide: true, cell: (w) => w.last ?? '-' },
  { header: 'MESSAGE', cell: (w) => w.message },
];
