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

/** The image tag the DaemonSet ships for a container: what the re-enacted sidecar models. */
export function shippedVersion(container: string): string {
  try {
    const ds = parseYaml(readFileSync(DAEMONSET_PATH, 'utf8')) as { spec?: { template?: { spec?: { containers?: Array<{ name: string; image?: string }> } } } };
    const image = ds.spec?.template?.spec?.containers?.find((c) => c.name === container)?.image ?? '';
    return image === '' ? 'unknown' : `models ${image.split('/').pop()} (deploy/base/daemonset.yaml)`;
  } catch {
    return 'unknown';
  }
}
