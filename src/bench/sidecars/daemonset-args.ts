// The sidecars' flags as deploy/base/daemonset.yaml gives them, adapted to one bench node the way kubelet would run the container there.
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';

export const DAEMONSET_PATH = path.resolve(fileURLToPath(new URL('../../../../deploy/base/daemonset.yaml', import.meta.url)));

interface Container { name: string; args?: string[]; env?: Array<{ name: string }> }
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
