// Test support: the upstream kubernetes-csi binaries beside the checkout (csi-sanity, the sidecars), unpacked once per process, and csi-sanity's report.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { run } from '../../src/sys/exec.js';
import { MiB } from '../driver/support.js';

const repo = path.resolve(fileURLToPath(new URL('../../..', import.meta.url)));
/** The test environment's upstream tools, beside the checkout as the project's workplace lays them out. */
export const CSI_TOOLS = path.resolve(repo, '..', 'shared', 'tools', 'csi');

/** Unpacks the tools once per process; why they cannot be had here, as a string, instead. */
let unpacked: Promise<string | { missing: string }> | undefined;
export function csiToolsDir(): Promise<string | { missing: string }> {
  unpacked ??= (async () => {
    if (!existsSync(path.join(CSI_TOOLS, 'unpack.sh'))) return { missing: `csi-sanity is not here: ${CSI_TOOLS} is missing (the upstream kubernetes-csi tools; see its README for the tags and how they are built)` };
    try {
      return (await run('bash', [path.join(CSI_TOOLS, 'unpack.sh')])).stdout.trim().split('\n').pop() ?? '';
    } catch (err) {
      return { missing: `csi-sanity could not be unpacked: ${(err as Error).message}` };
    }
  })();
  return unpacked;
}

/** The csi-sanity binary, or why it cannot be had. */
export async function csiSanity(): Promise<string | { missing: string }> {
  const dir = await csiToolsDir();
  return typeof dir === 'string' ? path.join(dir, 'csi-sanity') : dir;
}

export interface SanityCounts {
  passed: number;
  failed: number;
  pending: number;
  skipped: number;
}

/** csi-sanity's closing line: "Ran 67 of 92 Specs ... 67 Passed | 0 Failed | 1 Pending | 24 Skipped". */
export function sanityCounts(output: string): SanityCounts | undefined {
  // Colours are ANSI escapes around every word.
  const plain = output.replace(new RegExp(String.fromCharCode(27) + '\\[[0-9;]*m', 'g'), '');
  const m = /(\d+) Passed \| (\d+) Failed \| (\d+) Pending \| (\d+) Skipped/.exec(plain);
  if (!m) return undefined;
  return { passed: Number(m[1]), failed: Number(m[2]), pending: Number(m[3]), skipped: Number(m[4]) };
}

/** Runs csi-sanity; its report is on stdout whatever its exit code, so not through run(), which keeps only stderr of a failure. */
export function runSanity(binary: string, args: string[]): Promise<string> {
  return new Promise<string>((resolve) => {
    execFile(binary, args, { maxBuffer: 64 * MiB, timeout: 600_000 }, (_err, stdout, stderr) => resolve(`${stdout}${stderr}`));
  });
}

/**
 * Whether every failure of a run was csi-sanity failing to connect at all ("Connection timed out" in a
 * spec's set-up, a known flake of its client on a loaded machine), so that a second run is fair.
 */
export function onlyConnectTimeouts(output: string, counts: SanityCounts): boolean {
  const timeouts = output.match(/s: "Connection timed out"/g)?.length ?? 0;
  return counts.failed > 0 && timeouts === counts.failed;
}
