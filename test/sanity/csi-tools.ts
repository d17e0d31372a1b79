// Test support: csi-sanity (from the upstream tools beside the checkout, test/helpers/csi-tools.ts), how to run it and read its report.
import { execFile } from 'node:child_process';
import { csiTool } from '../helpers/csi-tools.js';
import { MiB } from '../driver/support.js';

/** The csi-sanity binary, or why it cannot be had. */
export function csiSanity(): Promise<string | { missing: string }> {
  return csiTool('csi-sanity');
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
