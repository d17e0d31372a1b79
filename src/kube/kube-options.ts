// How the driver reaches the Kubernetes API, when it does at all: the credentials' source and how long a CSI call may wait on the API.
/** In-cluster credentials (the pod's service account) or a kubeconfig file. */
export type KubeSource = { kind: 'in-cluster' } | { kind: 'kubeconfig'; path: string };

export interface KubeOptions {
  source: KubeSource;
  /**
   * The longest a CSI call waits on one API request. An outage must not hold a CreateVolume
   * past the sidecar's own timeout, so a feature that asks the API inside a call falls back to
   * what it does without the API after this.
   */
  callTimeoutMs: number;
}

/** Default bound of one API request inside a CSI call. */
export const DEFAULT_API_TIMEOUT_MS = 3_000;
