// Test support: the upstream kubernetes-csi binaries of the test environment (../shared/tools/csi), unpacked once per process.
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { run } from '../../src/sys/exec.js';

const repo = path.resolve(fileURLToPath(new URL('../../..', import.meta.url)));
/** The test environment's upstream tools, beside the checkout as the project's workplace lays them out. */
export const CSI_TOOLS = path.resolve(repo, '..', 'shared', 'tools', 'csi');

let unpacked: Promise<string | { missing: string }> | undefined;

/** The unpacked directory of every tool, or why it cannot be had here. */
export function csiToolsDir(): Promise<string | { missing: string }> {
  unpacked ??= (async () => {
    if (!existsSync(path.join(CSI_TOOLS, 'unpack.sh'))) return { missing: `${CSI_TOOLS} is missing (the upstream kubernetes-csi tools; see its README for the tags and how they are built)` };
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
