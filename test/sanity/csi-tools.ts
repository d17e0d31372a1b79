// Test support: csi-sanity (from the upstream tools, test/helpers/csi-tools.ts) unpacked alone, how to run it and read its report.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { run } from '../../src/sys/exec.js';
import { CSI_TOOLS, toolsMissing } from '../helpers/csi-tools.js';
import { MiB } from '../driver/support.js';

async function sha256(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/**
 * Unpacks csi-sanity alone, as the tools' unpack.sh does each of them (xz, then the checksum
 * from SHA256SUMS), into the same default folder under the temp dir, reusing a checked copy.
 * Only the one binary: in the VM, under software emulation and on a tmpfs that holds the tests'
 * disk images, unpacking all eight would cost tens of seconds and some 200 MB of the guest's memory.
 */
async function unpackCsiSanity(): Promise<string> {
  const packed = path.join(CSI_TOOLS, 'bin', 'csi-sanity.xz');
  const sums = await fs.readFile(path.join(CSI_TOOLS, 'SHA256SUMS'), 'utf8');
  const want = sums.split('\n').map((l) => l.trim().split(/\s+/)).find((f) => f[1] === 'csi-sanity')?.[0];
  if (want === undefined) throw new Error(`${CSI_TOOLS}/SHA256SUMS has no line for csi-sanity`);
  const dir = path.join(os.tmpdir(), 'lode-csi-tools');
  const binary = path.join(dir, 'csi-sanity');
  if (existsSync(binary) && (await sha256(binary)) === want) return binary;
  await fs.mkdir(dir, { recursive: true });
  const part = `${binary}.part`;
  // xz writes to the file itself, so the 15 MB do not pass through this process.
  await run('sh', ['-c', 'xz -dc "$1" > "$2"', 'sh', packed, part]);
  const got = await sha256(part);
  if (got !== want) throw new Error(`${packed} unpacks to a binary whose sha256 is ${got}, not ${want} as SHA256SUMS says`);
  await fs.chmod(part, 0o755);
  await fs.rename(part, binary);
  return binary;
}

/** Unpacks csi-sanity once per process; why it cannot be had here, as a string, instead. */
let sanity: Promise<string | { missing: string }> | undefined;
export function csiSanity(): Promise<string | { missing: string }> {
  sanity ??= (async () => {
    if (!existsSync(path.join(CSI_TOOLS, 'bin', 'csi-sanity.xz'))) {
      // A directory of ready binaries (LODE_CSI_TOOLS) is used as it is.
      const ready = path.join(CSI_TOOLS, 'csi-sanity');
      if (existsSync(ready)) return ready;
      return { missing: toolsMissing(`csi-sanity is not here: ${CSI_TOOLS} has neither bin/csi-sanity.xz nor csi-sanity`) };
    }
    try {
      return await unpackCsiSanity();
    } catch (err) {
      return { missing: `csi-sanity could not be unpacked (it needs xz, from xz-utils): ${(err as Error).message}` };
    }
  })();
  return sanity;
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
