// Shared helpers for the driver tests: status assertions, request builders, capacity and disk-state snapshots.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { request } from 'node:http';
import { status } from '@grpc/grpc-js';
import { grpcCode } from '../../src/csi/client.js';
import type * as csi from '../../src/csi/types.js';
import type { DriverHarness } from '../helpers/driver-harness.js';
import { scaledDeadlineMs } from '../helpers/vm-slowdown.js';

export { status };
export const MiB = 2 ** 20;
export const GiB = 2 ** 30;
export const TOPOLOGY_KEY = 'topology.lode.csi.dev/node';

export type AccessMode =
  | 'SINGLE_NODE_WRITER' | 'SINGLE_NODE_READER_ONLY' | 'SINGLE_NODE_SINGLE_WRITER' | 'SINGLE_NODE_MULTI_WRITER'
  | 'MULTI_NODE_READER_ONLY' | 'MULTI_NODE_SINGLE_WRITER' | 'MULTI_NODE_MULTI_WRITER';

export const MULTI_NODE_MODES: AccessMode[] = ['MULTI_NODE_READER_ONLY', 'MULTI_NODE_SINGLE_WRITER', 'MULTI_NODE_MULTI_WRITER'];

/** A filesystem capability as kubelet and csi-provisioner send it ('' = let the driver choose). */
export function fsCap(fsType = 'ext4', mode: AccessMode = 'SINGLE_NODE_WRITER', flags: string[] = []): csi.VolumeCapability {
  return { mount: { fs_type: fsType, mount_flags: flags }, access_mode: { mode } };
}

/** A raw block capability. */
export function rawCap(mode: AccessMode = 'SINGLE_NODE_WRITER'): csi.VolumeCapability {
  return { block: {}, access_mode: { mode } };
}

export interface VolumeOptions {
  cap?: csi.VolumeCapability;
  parameters?: Record<string, string>;
  limit?: number | string;
  requisite?: Array<Record<string, string>>;
}

/** A CreateVolume request for `required` bytes (undefined = no capacity range at all). */
export function volumeRequest(name: string, required: number | string | undefined, o: VolumeOptions = {}): csi.CreateVolumeRequest {
  const req: csi.CreateVolumeRequest = {
    name,
    volume_capabilities: [o.cap ?? fsCap()],
    parameters: o.parameters ?? {},
  };
  if (required !== undefined || o.limit !== undefined) {
    req.capacity_range = { required_bytes: required ?? 0, limit_bytes: o.limit ?? 0 };
  }
  if (o.requisite) req.accessibility_requirements = { requisite: o.requisite.map((segments) => ({ segments })) };
  return req;
}

/** Creates a volume and returns its id and capacity. */
export async function createVolume(h: DriverHarness, name: string, required: number | undefined, o: VolumeOptions = {}): Promise<{ id: string; capacity: number }> {
  const res = await h.client.createVolume(volumeRequest(name, required, o));
  assert.ok(res.volume, 'CreateVolume returned no volume');
  return { id: res.volume.volume_id, capacity: Number(res.volume.capacity_bytes) };
}

/**
 * Awaits `call` and asserts it failed with `code` and a non-empty message; returns the
 * message. A call that succeeds, or fails with another code, fails the test.
 */
export async function expectCode(call: Promise<unknown>, code: status, what = 'call'): Promise<string> {
  let failure: unknown;
  try {
    await call;
  } catch (err) {
    failure = err;
  }
  if (failure === undefined) assert.fail(`${what}: expected ${status[code]}, but it succeeded`);
  const got = grpcCode(failure);
  const message = (failure as { details?: unknown }).details;
  assert.equal(got === undefined ? String(failure) : status[got], status[code], `${what}: wrong status (${String(message ?? failure)})`);
  assert.ok(typeof message === 'string' && message.trim() !== '', `${what}: the error must say what is wrong`);
  return message;
}

/** The status name a settled call ended with ('OK' for success). */
export function outcome(r: PromiseSettledResult<unknown>): string {
  if (r.status === 'fulfilled') return 'OK';
  const code = grpcCode(r.reason);
  return code === undefined ? `not a gRPC error: ${String(r.reason)}` : status[code];
}

/** Available bytes GetCapacity reports for `parameters` (this node's topology unless given). */
export async function available(h: DriverHarness, parameters: Record<string, string> = {}, topology?: Record<string, string>): Promise<number> {
  const res = await h.client.getCapacity({ parameters, ...(topology ? { accessible_topology: { segments: topology } } : {}) });
  return Number(res.available_capacity);
}

/** Everything a call could change on the machine: pool files (with sizes), mounts, loop devices. */
export interface DiskState {
  files: string[];
  mounts: string[];
  loops: string[];
}

export async function diskState(h: DriverHarness): Promise<DiskState> {
  const files: string[] = [];
  for (const p of h.pools) {
    for (const f of await h.poolFiles(p.name)) {
      const st = await fs.stat(`${h.poolDir(p.name)}/volumes/${f}`).catch(() => undefined);
      files.push(`${p.name}/${f}:${st?.size ?? 'gone'}`);
    }
  }
  return { files, mounts: await h.mounts(), loops: (await h.loops()).sort() };
}

/** One line of /proc/self/mountinfo, read here independently of the driver's own parser. */
export interface MountInfo {
  mountPoint: string;
  options: string[];
  fsType: string;
  source: string;
}

export async function mountsAt(mountPoint: string): Promise<MountInfo[]> {
  const text = await fs.readFile('/proc/self/mountinfo', 'utf8');
  const unescape = (s: string) => s.replace(/\\([0-7]{3})/g, (_m, o: string) => String.fromCharCode(parseInt(o, 8)));
  const found: MountInfo[] = [];
  for (const line of text.split('\n')) {
    const f = line.split(' ');
    const sep = f.indexOf('-');
    if (sep < 6 || unescape(f[4] ?? '') !== mountPoint) continue;
    found.push({ mountPoint, options: (f[5] ?? '').split(','), fsType: f[sep + 1] ?? '', source: f[sep + 2] ?? '' });
  }
  return found;
}

/** The one mount at `mountPoint`; fails the test when there is none or several. */
export async function mountAt(mountPoint: string): Promise<MountInfo> {
  const m = await mountsAt(mountPoint);
  assert.equal(m.length, 1, `expected exactly one mount at ${mountPoint}, found ${m.length}`);
  return m[0]!;
}

/** Size of the filesystem mounted at `dir`, in bytes, and its free bytes. */
export async function fsSize(dir: string): Promise<{ total: number; free: number }> {
  const s = await fs.statfs(dir);
  return { total: s.blocks * s.bsize, free: s.bavail * s.bsize };
}

/** Every file and directory below `dir`, relative to it. */
export async function tree(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const e of await fs.readdir(dir, { withFileTypes: true })) {
    found.push(e.name);
    if (e.isDirectory()) for (const sub of await tree(path.join(dir, e.name))) found.push(`${e.name}/${sub}`);
  }
  return found.sort();
}

export async function exists(p: string): Promise<boolean> {
  return fs.lstat(p).then(() => true, () => false);
}

/** Writes `bytes` random bytes to `file`, flushed to disk; returns their sha256. */
export async function writeRandomFile(file: string, bytes: number): Promise<string> {
  const data = randomBytes(bytes);
  const handle = await fs.open(file, 'w');
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
  return sha256(data);
}

export function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

export async function fileHash(file: string): Promise<string> {
  return sha256(await fs.readFile(file));
}

/** Stages a mount volume and publishes it at the harness's target `tag`; returns both paths. */
export async function stageAndPublish(
  h: DriverHarness, id: string, tag: string, cap: csi.VolumeCapability = fsCap(), readonly = false,
): Promise<{ staging: string; target: string }> {
  const staging = h.stagingPath(tag);
  const target = h.targetPath(tag);
  await h.client.nodeStageVolume({ volume_id: id, staging_target_path: staging, volume_capability: cap });
  await h.client.nodePublishVolume({ volume_id: id, staging_target_path: staging, target_path: target, volume_capability: cap, readonly });
  return { staging, target };
}

/** Undoes stageAndPublish, then deletes the volume. */
export async function teardown(h: DriverHarness, id: string, tag: string): Promise<void> {
  await h.client.nodeUnpublishVolume({ volume_id: id, target_path: h.targetPath(tag) });
  await h.client.nodeUnstageVolume({ volume_id: id, staging_target_path: h.stagingPath(tag) });
  await h.client.deleteVolume({ volume_id: id });
}

/** Usage figures of NodeGetVolumeStats as numbers. */
export function usage(res: csi.NodeGetVolumeStatsResponse__Output, unit: 'BYTES' | 'INODES'): { total: number; used: number; available: number } {
  const u = res.usage.find((x) => x.unit === unit);
  assert.ok(u, `no ${unit} usage in ${JSON.stringify(res.usage)}`);
  return { total: Number(u.total), used: Number(u.used), available: Number(u.available) };
}

/** CAP_SYS_RESOURCE: the kernel refuses to grow a mounted ext4 filesystem without it (some containers drop it). */
export const CAP_SYS_RESOURCE = 24;

/** Whether this process (and so the driver it starts) has the capability `bit` in its effective set. */
export async function hasCapability(bit: number): Promise<boolean> {
  const text = await fs.readFile('/proc/self/status', 'utf8');
  const hex = /^CapEff:\s*([0-9a-f]+)$/m.exec(text)?.[1];
  return hex !== undefined && ((BigInt('0x' + hex) >> BigInt(bit)) & 1n) === 1n;
}

/** A plain GET on the driver's loopback HTTP endpoint. */
export function httpGet(port: number, urlPath: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path: urlPath }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    }).on('error', reject).end();
  });
}

/** The driver's JSON log lines, from offset `since` of the harness's log (which keeps every process's). */
export function logEntries(h: DriverHarness, since = 0): Array<Record<string, unknown>> {
  return h.log.slice(since).split('\n').filter((l) => l.startsWith('{') && l.endsWith('}')).map((l) => JSON.parse(l) as Record<string, unknown>);
}

/**
 * The port the driver bound for "--metrics-address 127.0.0.1:0", from the first such log line
 * after offset `since` (take `h.log.length` before starting the process). The endpoint starts
 * just after the CSI socket, so the line may still be on its way when Probe is first ready.
 */
export async function metricsPort(h: DriverHarness, since = 0): Promise<number> {
  const deadline = Date.now() + scaledDeadlineMs(10_000);
  for (;;) {
    const port = logEntries(h, since).find((e) => e['msg'] === 'metrics and health endpoint listening')?.['port'];
    if (typeof port === 'number') return port;
    if (Date.now() > deadline) throw new Error(`the driver logged no metrics port: ${h.log.slice(since)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Reads up to `length` bytes of a file or device at `offset` (fewer at its end). */
export async function readAt(file: string, offset: number, length: number): Promise<Buffer> {
  const handle = await fs.open(file, 'r');
  try {
    const buf = Buffer.alloc(length);
    const { bytesRead } = await handle.read(buf, 0, length, offset);
    return buf.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/** Writes `data` into a file or device at `offset` and fsyncs it, so a reader through another device sees it. */
export async function writeAtSynced(file: string, data: Buffer, offset: number): Promise<void> {
  const handle = await fs.open(file, 'r+');
  try {
    await handle.write(data, 0, data.length, offset);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** The errno code that stops a 4 KiB write (and fsync) at the start of `file`, or undefined when it went through. */
export async function writeRefusal(file: string): Promise<string | undefined> {
  try {
    await writeAtSynced(file, Buffer.alloc(4096, 1), 0);
    return undefined;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code ?? String(err);
  }
}
