// Test support: the one way the tests find kubectl (KUBECTL names it, else PATH, as .ci/run's `command -v` does) and how to install it when it is missing.
import { existsSync } from 'node:fs';
import { which } from './prerequisites.js';

/** What .ci/run installs where a machine has no kubectl. */
export const KUBECTL_INSTALL = 'apt-get install -y --no-install-recommends kubernetes-client';

/** The kubectl the tests run: the file KUBECTL names, else the first kubectl on PATH; undefined where there is none. */
export function findKubectl(): string | undefined {
  const named = process.env['KUBECTL'];
  if (named !== undefined && named !== '') return existsSync(named) ? named : undefined;
  return which('kubectl');
}

/** Why kubectl cannot be used here, or undefined when it can. */
export function kubectlMissing(): string | undefined {
  const named = process.env['KUBECTL'];
  if (findKubectl() !== undefined) return undefined;
  return named ? `kubectl not found at KUBECTL=${named}` : 'kubectl not found on PATH (or set KUBECTL to its path)';
}
