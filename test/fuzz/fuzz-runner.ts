// Runs the seeded hostile campaign against one driver and checks every answer: code, time, message size, sandbox, read-only.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { status } from '@grpc/grpc-js';
import { CsiClient, grpcCode } from '../../src/csi/client.js';
import type * as csi from '../../src/csi/types.js';
import type { DriverHarness } from '../helpers/driver-harness.js';
import { FuzzRandom } from './fuzz-random.js';
import { Lifecycles, type LifecycleCall, type LiveView } from './fuzz-lifecycle.js';
import { GENERATORS, summarize, type FuzzCall } from './hostile-requests.js';
import { Hostile, type FuzzWorld } from './hostile-values.js';
import type { PathLandscape } from './path-fixtures.js';
import { nearValid } from './near-valid.js';
import { methodPaths, RawWire, rawPayload } from './raw-wire.js';
import { diff, foreignMounts, mountLines, treeSnapshot } from './sandbox-watch.js';
import { listLoopDevices } from '../../src/sys/loop.js';

/** A hang, not a speed goal: no call of this suite does enough work to need longer on any machine. */
export const ANSWER_BOUND_MS = 10_000;
/** Status messages quote a short prefix of any input; 4 KiB leaves room for several fields and paths. */
export const DETAILS_BOUND_BYTES = 4096;
const MAX_HANGS = 3;

/** Codes a caller's request may earn. ABORTED only follows an earlier hang (calls here are sequential). */
const CALLER_CODES = new Set<number>([
  status.OK, status.INVALID_ARGUMENT, status.NOT_FOUND, status.ALREADY_EXISTS, status.FAILED_PRECONDITION,
  status.OUT_OF_RANGE, status.RESOURCE_EXHAUSTED, status.ABORTED,
]);

/**
 * INTERNAL answers accepted as genuine node faults (a broken disk, a kernel refusing a loop
 * device). Nothing a fuzz call does can cause one, so the list is empty: every INTERNAL or
 * UNKNOWN here is a caller's mistake answered with the wrong code.
 */
const NODE_FAULTS: readonly RegExp[] = [];

export interface Failure {
  index: number;
  rpc: string;
  check: string;
  detail: string;
  request?: unknown;
}

export interface RunConfig {
  seed: number;
  calls: number;
  maxFailures: number;
  warmupCalls: number;
  verbose: boolean;
  ext4GrowsOnline: boolean;
  inlineAllowed: boolean;
  /** Stage and publish paths the driver is allowed to use (target roots); mounts there are its own business. */
  allowedDirs: string[];
  /** Called once after warm-up, e.g. to read the driver's RSS. */
  onWarm(): Promise<void>;
  /** Volumes made before the run, and their own stage and publish paths, which drains leave alone. */
  keep: ReadonlyArray<{ id: string; paths: readonly string[] }>;
}

/**
 * Every so many calls the run takes down what it placed and deletes what it made, through CSI
 * and with the same checks: otherwise volumes that hostile calls left staged fill the pool, and
 * a long run ends up testing nothing but RESOURCE_EXHAUSTED.
 */
const DRAIN_EVERY = 1000;

/** A stage or publish that succeeded: everything the final teardown must undo through CSI. */
export interface Placement {
  kind: 'stage' | 'publish';
  volumeId: string;
  path: string;
}

export class HostileRun {
  readonly failures: Failure[] = [];
  readonly placements: Placement[] = [];
  /** "RPC CODE" -> count, for the summary. */
  readonly codes = new Map<string, number>();
  slowestMs = 0;
  hangs = 0;
  slowestCall = '';
  sent = 0;
  /** Calls are numbered across the sweep and the random run, so an index names one call. */
  private index = 0;
  sweepCalls = 0;
  clientEncodeErrors = 0;
  stoppedEarly = false;
  readonly lifecycles: Lifecycles;
  private readonly rng: FuzzRandom;
  private readonly hostile: Hostile;
  private readonly hostileIds: string[] = [];
  private readonly pending: FuzzCall[] = [];
  private raw: RawWire;
  private readonly methods = [...methodPaths().values()];
  private sentinelBase: string[] = [];
  private mountBase: string[] = [];

  constructor(private readonly h: DriverHarness, private readonly land: PathLandscape, private readonly cfg: RunConfig) {
    this.rng = new FuzzRandom(cfg.seed);
    this.lifecycles = new Lifecycles(this.rng.fork('lifecycle'), { staging: (t) => h.stagingPath(t), target: (t) => h.targetPath(t) }, cfg);
    const world: FuzzWorld = {
      kubelet: h.kubeletDir,
      hostilePaths: land.hostile,
      links: land.links,
      plainParents: land.plainParents,
      liveIds: () => [...this.lifecycles.ids(), ...this.hostileIds],
      livePaths: () => this.lifecycles.livePaths(),
    };
    this.hostile = new Hostile(this.rng.fork('values'), world);
    this.raw = new RawWire(h.endpoint);
  }

  fail(index: number, rpc: string, check: string, detail: string, request?: unknown): void {
    this.failures.push({ index, rpc, check, detail, ...(request !== undefined ? { request: summarize(request) } : {}) });
  }

  /**
   * Every planted path for every call that takes a path, against a staged filesystem volume and
   * a staged raw block volume: the few exact combinations (a raw block publish onto a dangling
   * link) that random draws reach too rarely. Runs before the random calls, numbered first.
   */
  async sweep(anchors: readonly LiveView[]): Promise<void> {
    const calls: FuzzCall[] = [];
    const mk = (rpc: string, request: unknown, send: FuzzCall['send']): FuzzCall => ({ rpc, request, big: false, send });
    for (const p of this.land.hostile) {
      for (const a of anchors) {
        const stage = { volume_id: a.id, staging_target_path: p, volume_capability: a.cap };
        const pub = { volume_id: a.id, staging_target_path: a.staging, target_path: p, volume_capability: a.cap };
        const pubRo = { ...pub, readonly: true };
        const unpub = { volume_id: a.id, target_path: p };
        const unstage = { volume_id: a.id, staging_target_path: p };
        const stats = { volume_id: a.id, volume_path: p };
        const expand = { volume_id: a.id, volume_path: p, capacity_range: { required_bytes: a.bytes } };
        calls.push(
          mk('NodeStageVolume', stage, (c, o) => c.nodeStageVolume(stage, o)),
          mk('NodePublishVolume', pub, (c, o) => c.nodePublishVolume(pub, o)),
          mk('NodePublishVolume', pubRo, (c, o) => c.nodePublishVolume(pubRo, o)),
          mk('NodeGetVolumeStats', stats, (c, o) => c.nodeGetVolumeStats(stats, o)),
          mk('NodeExpandVolume', expand, (c, o) => c.nodeExpandVolume(expand, o)),
          mk('NodeUnpublishVolume', unpub, (c, o) => c.nodeUnpublishVolume(unpub, o)),
          mk('NodeUnstageVolume', unstage, (c, o) => c.nodeUnstageVolume(unstage, o)),
        );
      }
      const inline = {
        volume_id: 'csi-sweep', target_path: p, volume_capability: { mount: { fs_type: 'ext4', mount_flags: [] }, access_mode: { mode: 'SINGLE_NODE_WRITER' as const } },
        volume_context: { 'csi.storage.k8s.io/ephemeral': 'true', size: '16Mi' },
      };
      const inlineOff = { volume_id: 'csi-sweep', target_path: p };
      calls.push(
        mk('NodePublishVolume', inline, (c, o) => c.nodePublishVolume(inline, o)),
        mk('NodeUnpublishVolume', inlineOff, (c, o) => c.nodeUnpublishVolume(inlineOff, o)),
      );
    }
    // Conflicts with what is already there, at the anchors' own paths: a second stage read-only
    // over a read-write one, read-only publishes with `rw`, and a capability that is both kinds.
    for (const a of anchors) {
      const readOnlyMode: csi.VolumeCapability = { ...a.cap, access_mode: { mode: 'SINGLE_NODE_READER_ONLY' } };
      const both: csi.VolumeCapability = { block: {}, mount: { fs_type: 'ext4', mount_flags: [] }, access_mode: { mode: 'SINGLE_NODE_WRITER' } };
      const restageRo = { volume_id: a.id, staging_target_path: a.staging, volume_capability: readOnlyMode };
      const restageBoth = { volume_id: a.id, staging_target_path: a.staging, volume_capability: both };
      calls.push(
        mk('NodeStageVolume', restageRo, (c, o) => c.nodeStageVolume(restageRo, o)),
        mk('NodeStageVolume', restageBoth, (c, o) => c.nodeStageVolume(restageBoth, o)),
      );
      if (a.block) continue;
      const rwFlag: csi.VolumeCapability = { ...a.cap, mount: { fs_type: 'ext4', mount_flags: ['rw'] } };
      const target = this.h.targetPath('sweep-ro');
      const pubRo = { volume_id: a.id, staging_target_path: a.staging, target_path: target, volume_capability: rwFlag, readonly: true };
      const pubOverRw = { volume_id: a.id, staging_target_path: a.staging, target_path: a.target, volume_capability: a.cap, readonly: true };
      const unpub = { volume_id: a.id, target_path: target };
      calls.push(
        mk('NodePublishVolume', pubRo, (c, o) => c.nodePublishVolume(pubRo, o)),
        mk('NodePublishVolume', pubOverRw, (c, o) => c.nodePublishVolume(pubOverRw, o)),
        mk('NodeUnpublishVolume', unpub, (c, o) => c.nodeUnpublishVolume(unpub, o)),
      );
    }
    this.sentinelBase = await treeSnapshot(this.land.sentinel);
    this.mountBase = await foreignMounts(this.h.root, this.cfg.allowedDirs);
    this.pending.push(...calls);
    for (; this.pending.length > 0 && this.hangs < MAX_HANGS; this.index++) await this.one(this.index);
    this.sweepCalls = this.index;
    if (this.hangs >= MAX_HANGS) this.stoppedEarly = true;
  }

  async run(): Promise<void> {
    this.sentinelBase = await treeSnapshot(this.land.sentinel);
    this.mountBase = await foreignMounts(this.h.root, this.cfg.allowedDirs);
    for (let n = 0; n < this.cfg.calls && this.hangs < MAX_HANGS; n++, this.index++) {
      const i = this.index;
      if (n === this.cfg.warmupCalls) await this.cfg.onWarm();
      if (n > 0 && n % DRAIN_EVERY === 0) this.queueDrain(i);
      const draining = this.pending.length > 0;
      await this.one(i);
      if (draining && this.pending.length === 0 && this.drainStartedAt !== undefined) await this.checkDrained(i);
      // The driver's log of thousands of calls is not needed once they passed.
      if (this.h.log.length > 4 * 2 ** 20) this.h.log = this.h.log.slice(-(2 ** 20));
      // A hung driver makes every later call hang too (one core, or a lock held): a few say all there is.
      if (this.failures.length >= this.cfg.maxFailures || this.hangs >= MAX_HANGS) { this.stoppedEarly = true; break; }
      if (this.h.proc?.exitCode !== null || this.h.proc?.signalCode !== null) {
        this.fail(i, '-', 'driver alive', `the driver exited (${this.h.proc?.exitCode ?? this.h.proc?.signalCode}); last log: ${this.h.log.slice(-600)}`);
        this.stoppedEarly = true;
        break;
      }
    }
    if (this.cfg.warmupCalls >= this.cfg.calls) await this.cfg.onWarm();
    this.raw.close();
  }

  private drainedUpTo = 0;
  private drainStartedAt: number | undefined;
  private lastDrainEnd = 0;

  /**
   * After a drain only the kept volumes may hold loop devices, images and records: anything
   * else is a leak of one of the calls since the previous drain, which names the window.
   */
  private async checkDrained(i: number): Promise<void> {
    const keep = this.cfg.keep.map((k) => k.id);
    const mine = (file: string) => keep.some((id) => path.basename(file).startsWith(id + '.'));
    const loops = (await listLoopDevices()).filter((d) => d.backingFile.startsWith(this.h.root + '/') && !mine(d.backingFile));
    const files = (await this.h.poolFiles()).filter((f) => !mine(f));
    if (loops.length + files.length > 0) {
      this.fail(i, 'drain', 'nothing left after everything was taken down',
        `calls #${this.lastDrainEnd}-#${this.drainStartedAt}: loop devices ${JSON.stringify(loops.map((d) => `${d.device} ${path.basename(d.backingFile)}`))}, pool files ${JSON.stringify(files)}`);
    }
    this.lastDrainEnd = i + 1;
    this.drainStartedAt = undefined;
  }

  /** Queues the teardown of everything placed and made since the last drain (see DRAIN_EVERY). */
  private queueDrain(i: number): void {
    this.drainStartedAt = i;
    const keepIds = new Set(this.cfg.keep.map((k) => k.id));
    const kept = (p: Placement) => this.cfg.keep.some((k) => k.id === p.volumeId && k.paths.includes(p.path));
    const seen = new Set<string>();
    const recent = this.placements.slice(this.drainedUpTo).filter((p) => {
      const key = `${p.kind} ${p.volumeId} ${p.path}`;
      const fresh = !seen.has(key) && !kept(p);
      seen.add(key);
      return fresh;
    }).reverse();
    this.drainedUpTo = this.placements.length;
    const mk = (rpc: string, request: unknown, send: FuzzCall['send']): FuzzCall => ({ rpc, request, big: false, send });
    const undo = recent.map((p) => {
      const req = p.kind === 'publish' ? { volume_id: p.volumeId, target_path: p.path } : { volume_id: p.volumeId, staging_target_path: p.path };
      return p.kind === 'publish'
        ? mk('NodeUnpublishVolume', req, (c, o) => c.nodeUnpublishVolume({ volume_id: p.volumeId, target_path: p.path }, o))
        : mk('NodeUnstageVolume', req, (c, o) => c.nodeUnstageVolume({ volume_id: p.volumeId, staging_target_path: p.path }, o));
    });
    const ids = new Set([...this.lifecycles.abandon(), ...this.hostileIds.splice(0), ...recent.map((p) => p.volumeId)]);
    const deletes = [...ids].filter((id) => !keepIds.has(id)).map((id) => mk('DeleteVolume', { volume_id: id }, (c, o) => c.deleteVolume({ volume_id: id }, o)));
    // Snapshots the hostile calls made: whatever is listed goes, so the pool drains to empty.
    const snapshots = mk('DeleteSnapshot', { all: true }, async (c, o) => {
      for (const e of (await c.listSnapshots({}, o)).entries) await c.deleteSnapshot({ snapshot_id: e.snapshot?.snapshot_id ?? '' }, o);
      return {};
    });
    // Twice: an order that blocks one teardown (a mount below another) is undone in the second pass.
    this.pending.push(...undo, ...undo, snapshots, ...deletes);
  }

  private choose(): { call: FuzzCall; life?: LifecycleCall } | { rawMethod: string; payload: Buffer } {
    const queued = this.pending.shift();
    if (queued) return { call: queued };
    const kind = this.rng.weighted<'life' | 'raw' | 'hostile'>([[12, 'life'], [6, 'raw'], [82, 'hostile']]);
    if (kind === 'life') { const life = this.lifecycles.next(); return { call: life, life }; }
    if (kind === 'raw') return { rawMethod: this.rng.pick(this.methods), payload: rawPayload(this.rng) };
    if (this.rng.chance(0.45)) {
      const near = nearValid(this.hostile, this.rng, this.lifecycles.views());
      if (near) return { call: near };
    }
    const [, make] = this.rng.pick(GENERATORS);
    return { call: make(this.hostile, this.rng, this.rng.chance(0.08)) };
  }

  private async one(i: number): Promise<void> {
    const chosen = this.choose();
    const started = performance.now();
    let code: number;
    let details = '';
    let rpc: string;
    let request: unknown;
    let response: unknown;
    if ('rawMethod' in chosen) {
      rpc = `raw ${chosen.rawMethod}`;
      request = `${chosen.payload.length} bytes: ${chosen.payload.subarray(0, 24).toString('hex')}`;
      const out = await this.raw.send(chosen.rawMethod, chosen.payload, ANSWER_BOUND_MS);
      code = out.code;
      details = out.details;
    } else {
      rpc = chosen.call.rpc;
      request = chosen.call.request;
      try {
        response = await chosen.call.send(this.h.client, { timeoutMs: ANSWER_BOUND_MS });
        code = status.OK;
      } catch (err) {
        const c = grpcCode(err);
        details = String((err as { details?: unknown }).details ?? err);
        if (c === undefined || /serialization failure/i.test(details)) {
          // The test's own client refused to encode the request: nothing reached the driver.
          this.clientEncodeErrors++;
          await chosen.life?.settle(false);
          return;
        }
        code = c;
      }
    }
    const elapsed = performance.now() - started;
    this.sent++;
    const codeName = status[code] ?? String(code);
    this.codes.set(`${rpc} ${codeName}`, (this.codes.get(`${rpc} ${codeName}`) ?? 0) + 1);
    if (elapsed > this.slowestMs) { this.slowestMs = elapsed; this.slowestCall = `#${i} ${rpc}`; }
    if (this.cfg.verbose) console.log(`#${i} ${rpc} -> ${codeName} ${elapsed.toFixed(0)}ms ${JSON.stringify(summarize(request)).slice(0, 300)} ${details.slice(0, 200)}`);

    if (code === status.DEADLINE_EXCEEDED || elapsed > ANSWER_BOUND_MS) {
      this.hangs++;
      this.fail(i, rpc, 'answer within 10 s', `${codeName} after ${elapsed.toFixed(0)} ms`, request);
      // A connection that lost one answer may lose every later one; start afresh so each hang is counted once.
      this.freshConnections();
    } else if ((code === status.INTERNAL || code === status.UNKNOWN) && !NODE_FAULTS.some((re) => re.test(details))) {
      this.fail(i, rpc, 'no INTERNAL/UNKNOWN for a caller\'s request', `${codeName}: ${details.slice(0, 300)}`, request);
    } else if (!CALLER_CODES.has(code)) {
      this.fail(i, rpc, 'a caller\'s code', `${codeName}: ${details.slice(0, 300)}`, request);
    }
    if (Buffer.byteLength(details) > DETAILS_BOUND_BYTES) {
      this.fail(i, rpc, `status message at most ${DETAILS_BOUND_BYTES} bytes`, `${Buffer.byteLength(details)} bytes: ${details.slice(0, 120)}`, request);
    }

    const ok = code === status.OK;
    if ('call' in chosen && ok) {
      const odd = unsupportedCapability(chosen.call.rpc, chosen.call.request, response);
      if (odd !== undefined) this.fail(i, rpc, 'unsupported capabilities are refused', odd, request);
    }
    if ('call' in chosen) {
      if (ok) await this.track(i, chosen.call, response);
      try {
        const problem = await chosen.life?.settle(ok);
        if (problem) this.fail(i, rpc, 'data intact', problem, request);
      } catch (err) {
        this.fail(i, rpc, 'a published volume is usable', `after OK: ${(err as Error).message}`, request);
      }
    }
    await this.checkSandbox(i, rpc, request);
  }

  private freshConnections(): void {
    this.h.client.close();
    this.h.client = new CsiClient(this.h.endpoint, 60_000);
    this.raw.close();
    this.raw = new RawWire(this.h.endpoint);
  }

  /** Remembers what a successful call placed, checks read-only and single mounts, and keeps hostile creates few. */
  private async track(i: number, call: FuzzCall, response: unknown): Promise<void> {
    const req = call.request as Record<string, unknown>;
    const id = typeof req.volume_id === 'string' ? req.volume_id : '';
    if (call.rpc === 'CreateVolume') {
      const created = (response as { volume?: { volume_id?: string } } | undefined)?.volume?.volume_id;
      if (created && !this.lifecycles.ids().includes(created) && !this.hostileIds.includes(created)) {
        this.hostileIds.push(created);
        // A valid delete soon after, so strays do not fill the pool; a staged one stays for the final teardown.
        if (this.hostileIds.length > 6) {
          const old = this.hostileIds.shift() as string;
          this.pending.push({ rpc: 'DeleteVolume', request: { volume_id: old }, big: false, send: (c, o) => c.deleteVolume({ volume_id: old }, o) });
        }
      }
      return;
    }
    const placed = call.rpc === 'NodeStageVolume' ? req.staging_target_path : call.rpc === 'NodePublishVolume' ? req.target_path : undefined;
    if (typeof placed !== 'string') return;
    this.placements.push({ kind: call.rpc === 'NodeStageVolume' ? 'stage' : 'publish', volumeId: id, path: placed });
    const cap = req.volume_capability as { access_mode?: { mode?: string } | null } | undefined;
    const readOnly = req.readonly === true || cap?.access_mode?.mode === 'SINGLE_NODE_READER_ONLY';
    const trimmed = placed.replace(/(.)\/+$/, '$1');
    const seen = asTheDriverReadsIt(trimmed);
    const real = Buffer.from(await fs.realpath(seen).catch(() => seen)).toString();
    const at = (await mountLines()).filter((m) => m.mountPoint === real);
    // A raw block stage mounts nothing; everything else mounts exactly one thing, never stacked on another.
    if (at.length > 1 || (at.length === 0 && call.rpc === 'NodePublishVolume')) {
      this.fail(i, call.rpc, 'exactly one mount per path', `${at.length} mounts at ${real}: ${at.map((m) => m.source).join(', ')}`, call.request);
    }
    const isDir = await fs.lstat(real).then((s) => s.isDirectory(), () => false);
    // A raw block publication is a bind of a device node; its read-only-ness is the device's, not the mount's.
    if (readOnly && isDir && at.some((m) => !m.options.includes('ro'))) {
      this.fail(i, call.rpc, 'read-only is read-only', `${real} is mounted ${at.map((m) => m.options.join(',')).join(' / ')}`, call.request);
    }
  }

  private async checkSandbox(i: number, rpc: string, request: unknown): Promise<void> {
    const tree = await treeSnapshot(this.land.sentinel);
    const t = diff(this.sentinelBase, tree);
    if (t.added.length + t.removed.length > 0) {
      this.fail(i, rpc, 'nothing written outside pools and target roots', `sentinel ${path.basename(this.land.sentinel)}: added ${JSON.stringify(t.added)} removed ${JSON.stringify(t.removed)}`, request);
      this.sentinelBase = tree;
    }
    const mounts = await foreignMounts(this.h.root, this.cfg.allowedDirs);
    const m = diff(this.mountBase, mounts);
    if (m.added.length + m.removed.length > 0) {
      this.fail(i, rpc, 'no mount outside pools and target roots', `mounts added ${JSON.stringify(m.added)} removed ${JSON.stringify(m.removed)}`, request);
      this.mountBase = mounts;
    }
  }
}

/**
 * A string as the driver decodes it: the client writes a lone surrogate as three bytes that
 * are not UTF-8, and the server reads each as U+FFFD (a Go client, like kubelet, cannot send
 * one at all).
 */
function asTheDriverReadsIt(s: string): string {
  return s.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd\ufffd\ufffd');
}

const MULTI_NODE = /^MULTI_NODE_/;

/** Every VolumeCapability-shaped object in a request. */
function capabilitiesIn(value: unknown, out: Array<Record<string, unknown>> = []): Array<Record<string, unknown>> {
  if (Array.isArray(value)) for (const v of value) capabilitiesIn(v, out);
  else if (typeof value === 'object' && value !== null) {
    const o = value as Record<string, unknown>;
    if ('access_mode' in o || 'block' in o || 'mount' in o) out.push(o);
    else for (const v of Object.values(o)) capabilitiesIn(v, out);
  }
  return out;
}

/**
 * Why an answer of OK accepted what Lode does not serve: a capability that is both block and
 * mount (it cannot be both; it used to be taken silently as mount), or a multi-node access
 * mode. Only the calls that act on the capability count; Validate counts when it confirms.
 */
export function unsupportedCapability(rpc: string, request: unknown, response: unknown): string | undefined {
  if (rpc === 'ValidateVolumeCapabilities') {
    if ((response as { confirmed?: unknown } | undefined)?.confirmed == null) return undefined;
  } else if (!['CreateVolume', 'NodeStageVolume', 'NodePublishVolume'].includes(rpc)) return undefined;
  for (const c of capabilitiesIn(request)) {
    if (c.block != null && c.mount != null) return 'a capability with both block and mount was accepted';
    const mode = (c.access_mode as { mode?: unknown } | null | undefined)?.mode;
    if (typeof mode === 'string' && MULTI_NODE.test(mode)) return `access mode ${mode} was accepted`;
  }
  return undefined;
}

/** Failures grouped by check and call, each group with its count and first examples, so one defect reads as one line. */
export function groupFailures(seed: number, failures: readonly Failure[], examples = 2): string[] {
  const groups = new Map<string, Failure[]>();
  for (const f of failures) {
    const key = `[${f.check}] ${f.rpc.replace(/^raw .*/, 'raw bytes')}`;
    groups.set(key, [...(groups.get(key) ?? []), f]);
  }
  return [...groups.entries()].flatMap(([key, fs]) => [
    `${key}: ${fs.length} call(s), first at #${fs.map((f) => f.index).slice(0, 8).join(', #')}`,
    ...fs.slice(0, examples).map((f) => `    ${describeFailure(seed, f)}`),
  ]);
}

/** A failure as one line that says how to replay it. */
export function describeFailure(seed: number, f: Failure): string {
  return `seed ${seed} call #${f.index} ${f.rpc}: [${f.check}] ${f.detail}${f.request !== undefined ? ` request=${JSON.stringify(f.request).slice(0, 400)}` : ''}`;
}
