// Running the real kubectl in tests: which binaries to try, a kubeconfig for a test's server, and a bounded run.
import { execFile } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { findKubectl, KUBECTL_INSTALL, kubectlMissing } from '../../helpers/kubectl.js';
import { skipUnlessRequired } from '../../helpers/prerequisites.js';

/** The machine's kubectl (KUBECTL overrides, else PATH) and, when KUBECTL_DEB names it, a second one (Debian's 1.20). */
export const KUBECTL_BINARIES = [findKubectl() ?? '', process.env['KUBECTL_DEB'] ?? ''].filter((p) => p !== '' && existsSync(p));

/** The `skip` option of a test that runs the machine's kubectl: why it cannot, or under CI=true a failure of the file. */
export function kubectlSkip(): string | undefined {
  return skipUnlessRequired(kubectlMissing(), KUBECTL_INSTALL);
}

/** Writes a kubeconfig for a plain-HTTP server on loopback; returns the flags that use it with a cache of its own. */
export function kubectlFlags(dir: string, port: number, namespace?: string): string[] {
  const kubeconfig = join(dir, `kubeconfig-${port}`);
  const ns = namespace === undefined ? '' : `, namespace: ${namespace}`;
  writeFileSync(kubeconfig, `apiVersion: v1\nkind: Config\nclusters: [{name: fake, cluster: {server: "http://127.0.0.1:${port}"}}]\nusers: [{name: u, user: {}}]\ncontexts: [{name: c, context: {cluster: fake, user: u${ns}}}]\ncurrent-context: c\n`);
  return ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, `cache-${port}`)];
}

/** Runs kubectl (30 s bound against a hang); rejects with its stderr. */
export function runKubectl(bin: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(bin, args, { timeout: 30_000 }, (err, stdout, stderr) => (err ? reject(new Error(`${bin} ${args.join(' ')}: ${err.message}\n${stderr}`)) : resolve(stdout)));
  });
}
