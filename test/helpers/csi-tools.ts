// Test support: the upstream kubernetes-csi binaries of the test environment (LODE_CSI_TOOLS, else ../shared/tools/csi), unpacked once per process.
import { existsSync } from 'node:fs';
import type { TestContext } from 'node:test';
import * as path from 'node:path';
import { run } from '../../src/sys/exec.js';
import { csiToolsSource } from '../../src/bench/sidecars/csi-tools.js';
import { skipOrFail } from './prerequisites.js';

/**
 * The test environment's upstream tools: LODE_CSI_TOOLS (packed tools, or a directory of ready
 * binaries), else beside the checkout as the project's workplace lays them out; a clone elsewhere
 * (under /tmp, say) has them through LODE_CSI_TOOLS, which the npm scripts' set-up
 * (scripts/csi-tools.sh) sets from the local checkout it was cloned from.
 */
export const CSI_TOOLS = csiToolsSource();

/** Why the tools are not here, and the two ways to give them. */
export function toolsMissing(what: string): string {
  return `${what} (the upstream kubernetes-csi tools; see their README for the tags and how they are built; set LODE_CSI_TOOLS to them, or to a directory of ready binaries, when the checkout is not beside them)`;
}

let unpacked: Promise<string | { missing: string }> | undefined;

/** The unpacked directory of every tool, or why it cannot be had here. */
export function csiToolsDir(): Promise<string | { missing: string }> {
  unpacked ??= (async () => {
    if (!existsSync(path.join(CSI_TOOLS, 'unpack.sh'))) {
      // A directory of ready binaries is used as it is, as `--sidecars real` does.
      if (existsSync(path.join(CSI_TOOLS, 'csi-provisioner'))) return CSI_TOOLS;
      return { missing: toolsMissing(`${CSI_TOOLS} has neither an unpack.sh nor the binaries`) };
    }
    try {
      return (await run('bash', [path.join(CSI_TOOLS, 'unpack.sh')])).stdout.trim().split('\n').pop() ?? '';
    } catch (err) {
      return { missing: `the upstream kubernetes-csi tools could not be unpacked: ${(err as Error).message}` };
    }
  })();
  return unpacked;
}

/** The path of one tool (e.g. "csi-provisioner"), or why it cannot be had here. */
export async function csiTool(name: string): Promise<string | { missing: string }> {
  const dir = await csiToolsDir();
  if (typeof dir !== 'string') return { missing: `${name}: ${dir.missing}` };
  const file = path.join(dir, name);
  return existsSync(file) ? file : { missing: `${name} is not among the unpacked tools in ${dir}` };
}

/** The binaries `--sidecars real` runs: per node, then the cluster's one snapshot-controller. */
export const SIDECAR_TOOLS = ['csi-provisioner', 'csi-resizer', 'csi-snapshotter', 'csi-node-driver-registrar', 'snapshot-controller'] as const;

/**
 * Skips `t` with the reason when one of `--sidecars real`'s binaries is missing, and says so;
 * under CI=true, which has the tools, a missing one fails instead.
 */
export async function skipWithoutSidecarTools(t: TestContext): Promise<boolean> {
  for (const name of SIDECAR_TOOLS) {
    const b = await csiTool(name);
    if (typeof b === 'string') continue;
    return skipOrFail(t, b.missing);
  }
  return false;
}
