// The kubeconfig a bench run writes for its API: one cluster, one user without credentials, one context, current.
import { writeFileSync } from 'node:fs';
import { stringify } from 'yaml';

export const KUBECONFIG_CONTEXT = 'lode-bench';

export function kubeconfigText(serverUrl: string): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    // Plain HTTP on loopback: client libraries (client-node) refuse http:// unless TLS checks are declared off.
    clusters: [{ name: KUBECONFIG_CONTEXT, cluster: { server: serverUrl, 'insecure-skip-tls-verify': true } }],
    users: [{ name: KUBECONFIG_CONTEXT, user: {} }],
    contexts: [{ name: KUBECONFIG_CONTEXT, context: { cluster: KUBECONFIG_CONTEXT, user: KUBECONFIG_CONTEXT, namespace: 'default' } }],
    'current-context': KUBECONFIG_CONTEXT,
    preferences: {},
  });
}

/** Writes it readable by its owner only, as kubeconfigs are kept. */
export function writeKubeconfig(path: string, serverUrl: string): void {
  writeFileSync(path, kubeconfigText(serverUrl), { mode: 0o600 });
}
