// The containers' flags and settings as deploy/base/daemonset.yaml gives them, adapted to one bench node the way kubelet would run the container there.
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';

export const DAEMONSET_PATH = path.resolve(fileURLToPath(new URL('../../../../deploy/base/daemonset.yaml', import.meta.url)));

interface Container { name: string; args?: string[]; env?: Array<{ name: string; value?: unknown }> }
interface DaemonSet { metadata?: { name?: string; namespace?: string }; spec?: { template?: { spec?: { containers?: Container[] } } } }

/** Where the rendered DaemonSet runs: its name and namespace, what the sidecars' env and owner lookups name. */
export function daemonSetIdentity(file = DAEMONSET_PATH): { name: string; namespace: string } {
  const ds = parseYaml(readFileSync(file, 'utf8')) as DaemonSet;
  return { name: ds.metadata?.name ?? 'lode-node', namespace: ds.metadata?.namespace ?? 'lode-system' };
}

export interface SidecarPlace {
  /** The node's driver socket (the container's /csi/csi.sock). */
  socket: string;
  namespace: string;
  /** klog verbosity for the log kept in the run's work dir; the DaemonSet's own when unset. */
  verbosity?: number;
  /** Flags dropped by prefix: what cannot hold on one machine (e.g. a fixed --http-endpoint port shared by every node). */
  drop?: readonly string[];
}

/**
 * A container's args from the DaemonSet: --csi-address becomes this node's socket,
 * $(NAMESPACE) is expanded as kubelet expands env references in args, and --v is set when
 * asked. Throws when the DaemonSet has no such container: the run must not silently start
 * a sidecar with flags of its own.
 */
export function daemonSetArgs(container: string, place: SidecarPlace, file = DAEMONSET_PATH): string[] {
  const ds = parseYaml(readFileSync(file, 'utf8')) as DaemonSet;
  const c = (ds.spec?.template?.spec?.containers ?? []).find((x) => x.name === container);
  if (c === undefined) throw new Error(`${file}: no container "${container}" in the DaemonSet`);
  return (c.args ?? [])
    .filter((a) => !(place.drop ?? []).some((d) => a.startsWith(d)))
    .map((a) => {
      if (a.startsWith('--csi-address=')) return `--csi-address=${place.socket}`;
      if (a.startsWith('--v=') && place.verbosity !== undefined) return `--v=${place.verbosity}`;
      return a.replaceAll('$(NAMESPACE)', place.namespace);
    });
}

/** The env var names a container gets (from fieldRefs in the DaemonSet), so a run sets the same ones. */
export function daemonSetEnvNames(container: string, file = DAEMONSET_PATH): string[] {
  const ds = parseYaml(readFileSync(file, 'utf8')) as DaemonSet;
  const c = (ds.spec?.template?.spec?.containers ?? []).find((x) => x.name === container);
  return (c?.env ?? []).map((e) => e.name);
}

/**
 * The driver's settings that place it on a node, given by the bench per node as flags (its
 * socket, node, pools, kubelet directory), and two it cannot take on one machine: a fixed
 * metrics port every node would share, and the pod's service account (the bench's drivers get
 * the run's kubeconfig instead).
 */
const DRIVER_PLACEMENT = new Set([
  'LODE_ENDPOINT', 'LODE_NODE_ID', 'LODE_DRIVER_NAME', 'LODE_TARGET_ROOTS', 'LODE_POOLS', 'LODE_POOL_CONFIG', 'LODE_POOL_ROOT',
  'LODE_METRICS_ADDRESS', 'LODE_IN_CLUSTER', 'LODE_KUBECONFIG',
]);

/**
 * The rest of the driver container's literal settings (env with a `value`), which choose its
 * features: the bench gives its drivers the same, so a run shows what the DaemonSet turns on and
 * off (LODE_NODE_LOSS=off in base). POD_NAMESPACE, a field reference there, is the DaemonSet's
 * namespace. Throws on a value that refers to another variable: the bench would not expand it
 * as kubelet does.
 */
export function daemonSetDriverEnv(container = 'lode', file = DAEMONSET_PATH): Record<string, string> {
  const ds = parseYaml(readFileSync(file, 'utf8')) as DaemonSet;
  const c = (ds.spec?.template?.spec?.containers ?? []).find((x) => x.name === container);
  if (c === undefined) throw new Error(`${file}: no container "${container}" in the DaemonSet`);
  const env: Record<string, string> = {};
  for (const e of c.env ?? []) {
    if (e.name === 'POD_NAMESPACE') env[e.name] = ds.metadata?.namespace ?? 'lode-system';
    if (DRIVER_PLACEMENT.has(e.name) || e.value === undefined) continue;
    if (typeof e.value !== 'string') throw new Error(`${file}: ${container} env ${e.name}: the value must be a string (quoted in YAML), not ${JSON.stringify(e.value)}`);
    if (e.value.includes('$(')) throw new Error(`${file}: ${container} env ${e.name}: "${e.value}" refers to another variable, which the bench does not expand`);
    env[e.name] = e.value;
  }
  return env;
}
