// `kubectl lode volumes`: every PersistentVolume of the driver, with where it lives (node, pool), what it is for (claim, pod) and how many snapshots it has.
import type { V1PersistentVolume, V1Pod } from '@kubernetes/client-node';
import { pinnedNode, podUsesClaim } from '../driver/cluster/node-loss/lost-nodes.js';
import { topologyKey } from '../driver/context/config.js';
import { PARAM_POOL } from '../driver/request/parameters.js';
import type { SnapshotContent } from './plugin-cluster.js';
import type { Column } from './plugin-output.js';
import { bytesOf, showBytes } from './quantities.js';

export interface VolumeRow {
  name: string;
  /** The volume's id in the driver (the PV's volumeHandle). */
  handle: string;
  node: string | null;
  pool: string | null;
  sizeBytes: number | null;
  phase: string;
  storageClass: string | null;
  /** namespace/name of the bound claim. */
  claim: string | null;
  /** namespace/name of the pods that mount the claim. */
  pods: string[];
  /** null where the snapshot CRDs are not installed. */
  snapshots: number | null;
}

/** The rows, by PV name; pure, so the tests can feed it objects. */
export function volumeRows(driverName: string, pvs: readonly V1PersistentVolume[], pods: readonly V1Pod[], contents: readonly SnapshotContent[] | undefined): VolumeRow[] {
  const key = topologyKey(driverName);
  const snapshotsOf = new Map<string, number>();
  for (const c of contents ?? []) {
    const source = c.spec?.source?.volumeHandle;
    if (c.spec?.driver === driverName && source !== undefined) snapshotsOf.set(source, (snapshotsOf.get(source) ?? 0) + 1);
  }
  return pvs.map((pv): VolumeRow => {
    const handle = pv.spec?.csi?.volumeHandle ?? '';
    const ref = pv.spec?.claimRef;
    const claimNs = ref?.namespace ?? '';
    const claimName = ref?.name;
    const using = claimName === undefined ? [] : pods.filter((p) => (p.metadata?.namespace ?? '') === claimNs && podUsesClaim(p, claimName) && p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed');
    return {
      name: pv.metadata?.name ?? '',
      handle,
      node: pinnedNode(pv, key) ?? null,
      pool: pv.spec?.csi?.volumeAttributes?.[PARAM_POOL] ?? null,
      sizeBytes: bytesOf(pv.spec?.capacity?.['storage']) ?? null,
      phase: pv.status?.phase ?? '',
      storageClass: pv.spec?.storageClassName ?? null,
      claim: claimName === undefined ? null : `${claimNs}/${claimName}`,
      pods: using.map((p) => `${p.metadata?.namespace ?? ''}/${p.metadata?.name ?? ''}`).sort(),
      snapshots: contents === undefined ? null : snapshotsOf.get(handle) ?? 0,
    };
  }).sort((a, b) => (a.node ?? '').localeCompare(b.node ?? '') || a.name.localeCompare(b.name));
}

export const VOLUME_COLUMNS: readonly Column<VolumeRow>[] = [
  { header: 'NAME', cell: (r) => r.name },
  { header: 'NODE', cell: (r) => r.node ?? '<none>' },
  { header: 'POOL', cell: (r) => r.pool ?? '<unknown>' },
  { header: 'SIZE', cell: (r) => showBytes(r.sizeBytes ?? undefined) },
  { header: 'STATUS', cell: (r) => r.phase, colour: (r) => (r.phase === 'Bound' ? undefined : 'yellow') },
  { header: 'CLAIM', cell: (r) => r.claim ?? '<none>' },
  { header: 'POD', cell: (r) => (r.pods.length > 0 ? r.pods.map((p) => p.slice(p.indexOf('/') + 1)).join(',') : '<none>') },
  { header: 'SNAPSHOTS', cell: (r) => (r.snapshots === null ? '-' : String(r.snapshots)) },
  { header: 'STORAGECLASS', wide: true, cell: (r) => r.storageClass ?? '' },
  { header: 'VOLUMEHANDLE', wide: true, cell: (r) => r.handle },
];
