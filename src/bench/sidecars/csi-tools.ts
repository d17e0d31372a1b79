// Where the real kubernetes-csi binaries come from for `sidecars: real`: LODE_CSI_TOOLS (ready binaries or packed tools), else the test environment's ../shared/tools/csi, unpacked once.
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { run } from '../../sys/exec.js';

const REPO = path.resolve(fileURLToPath(new URL('../../../../', import.meta.url)));

/** The packed tools: LODE_CSI_TOOLS, else beside the checkout as the project's workplace lays them out. */
export function csiToolsSource(): string {
  return path.resolve(process.env.LODE_CSI_TOOLS ?? path.join(REPO, '..', 'shared', 'tools', 'csi'));
}

/** A binary `sidecars: real` needs is not here: says which, and how to get it. */
export class MissingToolError extends Error {}

let unpacked: Promise<string> | undefined;

/** Unpacks the packed tools (unpack.sh checks each against SHA256SUMS), or takes a directory of ready binaries; returns the directory. */
function unpack(): Promise<string> {
  unpacked ??= (async () => {
    const src = csiToolsSource();
    const script = path.join(src, 'unpack.sh');
    if (!existsSync(script)) {
      // A directory of ready binaries (a user's own builds or downloads) is used as it is.
      if (existsSync(path.join(src, 'csi-provisioner'))) return src;
      throw new MissingToolError(`sidecars: real needs the upstream kubernetes-csi binaries, and ${src} has neither an unpack.sh nor the binaries (set LODE_CSI_TOOLS to a directory holding csi-provisioner, csi-resizer, csi-snapshotter, csi-node-driver-registrar and snapshot-controller, or to the packed tools of the test environment)`);
    }
    try {
      const out = (await run('bash', [script])).stdout.trim().split('\n').pop() ?? '';
      return out;
    } catch (err) {
      throw new MissingToolError(`sidecars: real: the kubernetes-csi binaries in ${src} could not be unpacked: ${(err as Error).message}`);
    }
  })();
  unpacked.catch(() => { unpacked = undefined; });
  return unpacked;
}

/** The paths of the named binaries, or a MissingToolError naming every one that is missing. */
export async function csiBinaries<N extends string>(names: readonly N[]): Promise<Record<N, string>> {
  const dir = await unpack();
  const out = {} as Record<N, string>;
  const missing: string[] = [];
  for (const n of names) {
    const file = path.join(dir, n);
    if (existsSync(file)) out[n] = file;
    else missing.push(n);
  }
  if (missing.length > 0) throw new MissingToolError(`sidecars: real: ${missing.join(', ')} missing from the unpacked kubernetes-csi tools in ${dir} (from ${csiToolsSource()})`);
  return out;
}

/** A binary's version as its --version prints it ("csi-provisioner v5.2.0" -> "v5.2.0"). */
export async function binaryVersion(binary: string): Promise<string> {
  try {
    const r = await run(binary, ['--version'], { timeoutMs: 10_000 });
    const text = `${r.stdout} ${r.stderr}`.trim();
    return /\bv\d+\.\d+\.\d+\S*/.exec(text)?.[0] ?? (text.split(/\s+/).pop() ?? 'unknown');
  } catch (err) {
    return `unknown (${(err as Error).message.split('\n')[0]})`;
  }
}
