// The volume handles this driver's PersistentVolumes name, read in full or not at all: a list that fails part-way is no answer.
import type { KubeClient } from '../../../kube/kube-client.js';
import { describeApiError } from '../../../kube/kube-errors.js';

/** PVs per page: a bounded answer per request however many PVs the cluster has. */
export const PV_PAGE_SIZE = 500;

/** A list longer than this many pages is refused as a server that never ends it (5 million PVs). */
const MAX_PAGES = 10_000;

/** Each page may take this long at least: a background list is not a CSI call, but it must end. */
const MIN_PAGE_TIMEOUT_MS = 10_000;

/** The PVs could not be read completely; what was read must not be taken for all of them. */
export class PvListError extends Error {
  override name = 'PvListError';
}

export interface NamedVolumes {
  /** spec.csi.volumeHandle of every PV whose spec.csi.driver is this driver. */
  handles: Set<string>;
  /** PVs read, of every driver. */
  pvs: number;
}

/**
 * Lists every PersistentVolume, page by page, and collects the handles this driver's name.
 * Any failure (no answer, an error status, an expired continue token, an answer that is not
 * a list) throws PvListError: the caller must then learn nothing from this round.
 */
export async function namedVolumes(kube: KubeClient, driverName: string): Promise<NamedVolumes> {
  const handles = new Set<string>();
  const timeoutMs = Math.max(kube.options.callTimeoutMs, MIN_PAGE_TIMEOUT_MS);
  let pvs = 0;
  let token: string | undefined;
  for (let page = 1; page <= MAX_PAGES; page++) {
    const what = `list persistentvolumes (page ${page})`;
    let list;
    try {
      list = await kube.bounded(what, (a) => a.core.listPersistentVolume({ limit: PV_PAGE_SIZE, ...(token !== undefined ? { _continue: token } : {}) }), timeoutMs);
    } catch (err) {
      throw new PvListError(describeApiError(err, what));
    }
    if (!Array.isArray(list?.items)) throw new PvListError(`${what}: the answer holds no items list`);
    for (const pv of list.items) {
      const csi = pv.spec?.csi;
      if (csi?.driver === driverName && typeof csi.volumeHandle === 'string' && csi.volumeHandle !== '') handles.add(csi.volumeHandle);
    }
    pvs += list.items.length;
    token = list.metadata?._continue;
    if (token === undefined || token === '') return { handles, pvs };
  }
  throw new PvListError(`list persistentvolumes: still not complete after ${MAX_PAGES} pages`);
}
