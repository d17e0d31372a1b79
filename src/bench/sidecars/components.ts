// What ran in a bench run: each control-plane and sidecar component, re-enacted by the bench or a real upstream binary, with the version it is or models.
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { DAEMONSET_PATH } from './daemonset-args.js';

/** Which sidecars a run uses: the bench's own re-enactments, or the real kubernetes-csi binaries. */
export type SidecarsMode = 'reenacted' | 'real';

export interface Component {
  /** The upstream name, e.g. csi-provisioner, snapshot-controller, kube-scheduler. */
  name: string;
  /** A node name, or "cluster". */
  scope: string;
  implementation: 'reenacted' | 'real';
  /** Real: the binary's own --version. Re-enacted: the upstream it models. */
  version: string;
  /** Real: the binary run and its log in the run's work dir (removed with it unless --keep-work-dir). */
  binary?: string;
  log?: string;
  /** Real: times it exited unexpectedly and was started again. */
  restarts?: number;
}

/**
 * The DaemonSet's container images by container name, read once: the file is the checkout's own,
 * and a run's component list asks for each node's sidecars (parsing the file per node cost a
 * 100-node run a second). Empty when it cannot be read, so every sidecar shows as unknown.
 */
let shippedImages: Map<string, string> | undefined;

function images(): Map<string, string> {
  if (shippedImages !== undefined) return shippedImages;
  shippedImages = new Map();
  try {
    const ds = parseYaml(readFileSync(DAEMONSET_PATH, 'utf8')) as { spec?: { template?: { spec?: { containers?: Array<{ name: string; image?: string }> } } } };
    for (const c of ds.spec?.template?.spec?.containers ?? []) if (c.image !== undefined) shippedImages.set(c.name, c.image);
  } catch {
    // unreadable: every sidecar's version is unknown
  }
  return shippedImages;
}

/** The image tag the DaemonSet ships for a container: what the re-enacted sidecar models. */
export function shippedVersion(container: string): string {
  const image = images().get(container) ?? '';
  return image === '' ? 'unknown' : `models ${image.split('/').pop()} (deploy/base/daemonset.yaml)`;
}
