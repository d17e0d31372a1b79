// Each node's driver as its DaemonSet pod and its /metrics show it, read through the API server's pod proxy with the user's own rights; what cannot be read becomes one note, not a failure.
import type { V1Pod } from '@kubernetes/client-node';
import { ExpositionError, parseExposition } from '../metrics/exposition-text.js';
import { driverFigures, type DriverFigures } from './driver-figures.js';
import { ClusterError, type PluginCluster } from './plugin-cluster.js';

/** The labels deploy/base/daemonset.yaml gives the driver's pods. */
export const DRIVER_POD_SELECTOR = 'app.kubernetes.io/name=lode,app.kubernetes.io/component=node';
/** The container port the driver serves /metrics on, by the name deploy/components/monitoring gives it. */
export const METRICS_PORT_NAME = 'metrics';

export interface DriverScrape {
  node: string;
  pod: string;
  /** The pod's Ready condition: Ready, NotReady, or its phase when not Running. */
  health: string;
  /** Null when the metrics could not be read (`problem` says why). */
  figures: DriverFigures | null;
  problem: string | null;
}

export interface DriverScrapes {
  /** Per node with a driver pod. */
  drivers: DriverScrape[];
  /** False when the pods could not be listed (the drivers' health is then unknown too). */
  podsListed: boolean;
  /** One line saying which figures are unknown where, and why; null when every driver answered. */
  note: string | null;
}

export type DriverSource = Pick<PluginCluster, 'podsSelected' | 'podProxy'>;

/** How many pods are asked at once: a large cluster's answer does not wait on them one by one, nor floods the API server. */
const PARALLEL = 8;

function health(pod: V1Pod): string {
  const phase = pod.status?.phase ?? 'Unknown';
  if (pod.metadata?.deletionTimestamp !== undefined && pod.metadata.deletionTimestamp !== null) return 'Terminating';
  if (phase !== 'Running') return phase;
  return pod.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True' ? 'Ready' : 'NotReady';
}

/** The port named "metrics" on the pod's containers (the driver's container first). */
export function metricsPort(pod: V1Pod): number | undefined {
  const containers = [...(pod.spec?.containers ?? [])].sort((a, b) => Number(b.name === 'lode') - Number(a.name === 'lode'));
  for (const c of containers) for (const p of c.ports ?? []) if (p.name === METRICS_PORT_NAME) return p.containerPort;
  return undefined;
}

/** Per node, the pod to ask: a Running one before others, then the newest (a rolling update may leave two for a moment). */
function podPerNode(pods: readonly V1Pod[]): Map<string, V1Pod> {
  const rank = (p: V1Pod): string => `${p.status?.phase === 'Running' && p.metadata?.deletionTimestamp == null ? 1 : 0}${new Date(p.metadata?.creationTimestamp ?? 0).toISOString()}`;
  const byNode = new Map<string, V1Pod>();
  for (const p of pods) {
    const node = p.spec?.nodeName;
    if (node === undefined || node === '') continue;
    const seen = byNode.get(node);
    if (seen === undefined || rank(p) > rank(seen)) byNode.set(node, p);
  }
  return byNode;
}

async function scrapeOne(source: DriverSource, namespace: string, driverName: string, node: string, pod: V1Pod): Promise<DriverScrape & { forbidden?: string }> {
  const name = pod.metadata?.name ?? '';
  const base = { node, pod: name, health: health(pod), figures: null };
  const port = metricsPort(pod);
  if (port === undefined) return { ...base, problem: 'no-port' };
  let text: string;
  try {
    text = await source.podProxy(namespace, name, port, 'metrics');
  } catch (err) {
    if (err instanceof ClusterError && (err.status === 403 || err.status === 401)) return { ...base, problem: 'forbidden', forbidden: err.message };
    if (err instanceof ClusterError) return { ...base, problem: `pod ${name} did not answer on port ${port}: ${err.message.replace(/^get pods\/proxy \S+: /, '')}` };
    throw err;
  }
  try {
    return { ...base, figures: driverFigures(parseExposition(text), driverName), problem: null };
  } catch (err) {
    if (err instanceof ExpositionError) return { ...base, problem: `pod ${name}'s port ${port} did not answer in the Prometheus text format (${err.message})` };
    throw err;
  }
}

const UNKNOWN = 'backend, size, allocated bytes, thin fill, quarantined volumes and driver version';

/**
 * Lists the driver's pods in `namespace` and reads each one's /metrics through the pod proxy.
 * Refusals and pods that do not answer leave those figures unknown and are said in `note`;
 * only errors that are not the API's answers (bugs) are thrown.
 */
export async function scrapeDrivers(source: DriverSource, namespace: string, driverName: string): Promise<DriverScrapes> {
  let pods: V1Pod[];
  try {
    pods = await source.podsSelected(namespace, DRIVER_POD_SELECTOR);
  } catch (err) {
    if (!(err instanceof ClusterError)) throw err;
    const why = err.status === 403 || err.status === 401 ? `you may not list pods in namespace ${namespace} (${err.message})` : err.message;
    return { drivers: [], podsListed: false, note: `${UNKNOWN} are unknown, and so is the drivers' health: ${why}` };
  }
  const entries = [...podPerNode(pods)].sort(([a], [b]) => a.localeCompare(b));
  if (entries.length === 0) {
    return { drivers: [], podsListed: true, note: `${UNKNOWN} are unknown: no pods labelled ${DRIVER_POD_SELECTOR} run in namespace ${namespace} (is the driver there? --driver-namespace says where)` };
  }
  const results: Array<DriverScrape & { forbidden?: string }> = [];
  for (let i = 0; i < entries.length; i += PARALLEL) {
    results.push(...await Promise.all(entries.slice(i, i + PARALLEL).map(([node, pod]) => scrapeOne(source, namespace, driverName, node, pod))));
  }
  const nodesWith = (problem: string): string[] => results.filter((r) => r.problem === problem).map((r) => r.node);
  const parts: string[] = [];
  const forbidden = results.find((r) => r.forbidden !== undefined)?.forbidden;
  if (forbidden !== undefined) {
    parts.push(`on ${nodesWith('forbidden').join(', ')}: you may not get pods/proxy in namespace ${namespace}, through which status reads each driver's /metrics (${forbidden})`);
  }
  const noPort = nodesWith('no-port');
  if (noPort.length > 0) {
    parts.push(`on ${noPort.join(', ')}: the driver's pod declares no container port named "${METRICS_PORT_NAME}", so its /metrics are on the pod's loopback only (deploy/components/monitoring serves them on the pod network)`);
  }
  for (const r of results) if (r.problem !== null && r.problem !== 'forbidden' && r.problem !== 'no-port') parts.push(`on ${r.node}: ${r.problem}`);
  const drivers = results.map(({ forbidden: _, ...r }) => (r.problem === 'forbidden' || r.problem === 'no-port' ? { ...r, problem: r.problem === 'forbidden' ? 'forbidden' : 'no metrics port' } : r));
  return { drivers, podsListed: true, note: parts.length === 0 ? null : `${UNKNOWN} are unknown ${parts.join('; ')}` };
}
