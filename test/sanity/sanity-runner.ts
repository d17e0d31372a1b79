// Runs the official CSI conformance suite (csi-sanity) against a real driver on one pool, for the host's backends and the VM's alike: finding and unpacking the binary, the run, its counts.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { run } from '../../src/sys/exec.js';
import type { BackendFixture } from '../conformance/fixture.js';
import { DriverHarness, type PoolSpec } from '../helpers/driver-harness.js';
import { CAP_SYS_RESOURCE, hasCapability, MiB } from '../driver/support.js';

const repo = path.resolve(fileURLToPath(new URL('../../..', import.meta.url)));
/**
 * The test environment's upstream tools, beside the checkout as the project's workplace lays them
 * out. The test VM sees the same path: it shares the host's root read-only.
 */
export const TOOLS = path.resolve(repo, '..', 'shared', 'tools', 'csi');

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
  const packed = path.join(TOOLS, 'bin', 'csi-sanity.xz');
  const sums = await fs.readFile(path.join(TOOLS, 'SHA256SUMS'), 'utf8');
  const want = sums.split('\n').map((l) => l.trim().split(/\s+/)).find((f) => f[1] === 'csi-sanity')?.[0];
  if (want === undefined) throw new Error(`${TOOLS}/SHA256SUMS has no line for csi-sanity`);
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
    if (!existsSync(path.join(TOOLS, 'bin', 'csi-sanity.xz'))) return { missing: `csi-sanity is not here: ${TOOLS}/bin/csi-sanity.xz is missing (the upstream kubernetes-csi tools; see their README for the tags and how they are built)` };
    try {
      return await unpackCsiSanity();
    } catch (err) {
      return { missing: `csi-sanity could not be unpacked (it needs xz, from xz-utils): ${(err as Error).message}` };
    }
  })();
  return sanity;
}

export interface Counts {
  passed: number;
  failed: number;
  pending: number;
  skipped: number;
}

/** csi-sanity's closing line: "Ran 67 of 92 Specs ... 67 Passed | 0 Failed | 1 Pending | 24 Skipped". */
export function sanityCounts(output: string): Counts | undefined {
  // Colours are ANSI escapes around every word.
  const plain = output.replace(new RegExp(String.fromCharCode(27) + '\\[[0-9;]*m', 'g'), '');
  const m = /(\d+) Passed \| (\d+) Failed \| (\d+) Pending \| (\d+) Skipped/.exec(plain);
  if (!m) return undefined;
  return { passed: Number(m[1]), failed: Number(m[2]), pending: Number(m[3]), skipped: Number(m[4]) };
}

export interface SanityRun {
  name: string;
  /**
   * Whether the node grows a volume by growing a mounted ext4 filesystem (resize2fs), which the
   * kernel allows only with CAP_SYS_RESOURCE; a dir pool's growth is a new limit and needs none.
   */
  growsMountedExt4: boolean;
  /** Why the medium cannot be made here, if it needs more than loop images. */
  unavailable?(): Promise<string | undefined>;
  pools(t: TestContext): Promise<PoolSpec[]>;
  parameters: Record<string, string>;
  bytes: number;
  block?: boolean;
  controllerExpansion: boolean;
  /** Only some specs: those whose names match `focus`, or all but those that match `skip` (ginkgo's), and why. */
  only?: { focus?: string; skip?: string; why: string };
}

/** One pool named `name` on a conformance fixture's medium, torn down after `t` (after the driver: see sanityTest). */
export async function fixturePools(t: TestContext, fixture: BackendFixture, name: string): Promise<PoolSpec[]> {
  const medium = await fixture.setup(t);
  t.after(() => medium.cleanup());
  return [{ name, ...medium.pool }];
}

/** Registers one test that runs csi-sanity against a fresh driver on `r`'s pools and wants 0 failures. */
export function sanityTest(r: SanityRun): void {
  test(`csi-sanity: ${r.name}: 0 failures`, { skip: process.getuid?.() !== 0 ? 'the driver needs root' : false }, async (t) => {
    const binary = await csiSanity();
    if (typeof binary !== 'string') {
      // A tool of the test environment: CI has it, so there its absence is a failure.
      if (process.env.CI === 'true') assert.fail(`CI=true: ${binary.missing}`);
      t.skip(binary.missing);
      return;
    }
    const without = await r.unavailable?.();
    if (without !== undefined) {
      t.skip(without);
      return;
    }
    const pools = await r.pools(t);
    const h = await DriverHarness.start({ nodeId: 'node-sanity', pools, extraArgs: r.controllerExpansion ? ['--controller-expansion'] : [] });
    // Registered after the medium's cleanup, so it runs first: the driver and its mounts go before the medium.
    t.after(() => h.cleanup());
    const params = path.join(h.root, 'parameters.yaml');
    await fs.writeFile(params, Object.entries(r.parameters).map(([k, v]) => `${k}: ${v}\n`).join(''));
    const args = [
      `--csi.endpoint=${h.socket}`,
      `--csi.mountdir=${path.join(h.kubeletDir, 'sanity-target')}`,
      `--csi.stagingdir=${path.join(h.kubeletDir, 'sanity-staging')}`,
      `--csi.testvolumeparameters=${params}`,
      `--csi.testvolumesize=${r.bytes}`,
      `--csi.testvolumeexpandsize=${2 * r.bytes}`,
      ...(r.block ? ['--csi.testvolumeaccesstype=block'] : []),
    ];
    if (r.only) {
      if (r.only.focus !== undefined) args.push(`--ginkgo.focus=${r.only.focus}`);
      if (r.only.skip !== undefined) args.push(`--ginkgo.skip=${r.only.skip}`);
      t.diagnostic(`${r.only.focus !== undefined ? `only the specs matching /${r.only.focus}/` : `all specs but those matching /${r.only.skip}/`}: ${r.only.why}`);
    }
    // The one documented refusal: a mounted ext4 grows on the node alone only with CAP_SYS_RESOURCE, which a
    // machine may withhold (the host's CI sandbox does; the test VM's root has it); the driver answers
    // FAILED_PRECONDITION and grows it at the next stage.
    if (r.growsMountedExt4 && !r.block && !r.controllerExpansion && !(await hasCapability(CAP_SYS_RESOURCE))) {
      args.push('--ginkgo.skip=NodeExpandVolume should work if node-expand is called after node-publish');
      t.diagnostic('skipped: NodeExpandVolume of a published ext4 volume (online ext4 growth needs CAP_SYS_RESOURCE, which this process lacks)');
    }
    // Its report is on stdout whatever its exit code, so not through run(), which keeps only stderr of a failure.
    const output = await new Promise<string>((resolve) => {
      execFile(binary, args, { maxBuffer: 64 * MiB, timeout: 600_000 }, (_err, stdout, stderr) => resolve(`${stdout}${stderr}`));
    });
    const counts = sanityCounts(output);
    assert.ok(counts, `csi-sanity printed no summary:\n${output.slice(-4000)}`);
    t.diagnostic(`${r.name}: ${counts.passed} passed, ${counts.failed} failed, ${counts.pending} pending, ${counts.skipped} skipped`);
    assert.equal(counts.failed, 0, `csi-sanity failures:\n${output.slice(-8000)}`);
    assert.ok(counts.passed > 0, 'some spec ran');
  });
}
