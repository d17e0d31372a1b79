// Valid lifecycles interleaved with the hostile calls, so stage, publish, expand and teardown meet live state.
import { createHash } from 'node:crypto';
import type { CallOptions, CsiClient } from '../../src/csi/client.js';
import type * as csi from '../../src/csi/types.js';
import type { FuzzRandom } from './fuzz-random.js';
import type { FuzzCall } from './hostile-requests.js';
import { MiB } from './hostile-values.js';
import { mountLines } from './sandbox-watch.js';
import { volumeDataHash, writeVolumeData } from './volume-data.js';

type Access = 'ext4' | 'xfs' | 'block' | 'inline';
type Step = 'create' | 'stage' | 'publish' | 'publish-ro' | 'expand' | 'check' | 'unpublish-ro' | 'unpublish' | 'unstage' | 'delete';

const PLAN: Record<Access, Step[]> = {
  ext4: ['create', 'stage', 'publish', 'publish-ro', 'expand', 'check', 'unpublish-ro', 'unpublish', 'unstage', 'delete'],
  xfs: ['create', 'stage', 'publish', 'expand', 'check', 'unpublish', 'unstage', 'delete'],
  block: ['create', 'stage', 'publish', 'publish-ro', 'expand', 'check', 'unpublish-ro', 'unpublish', 'unstage', 'delete'],
  inline: ['publish', 'check', 'unpublish'],
};

interface Live {
  n: number;
  access: Access;
  name: string;
  id: string;
  bytes: number;
  staging: string;
  target: string;
  roTarget: string;
  step: number;
  hash?: string;
  /** Set once a step failed: the rest of the plan is teardown only, whatever each call answers. */
  broken: boolean;
}

/** What a near-valid call starts from: a real volume and the request fields that fit it. */
export interface LiveView {
  id: string;
  name: string;
  bytes: number;
  inline: boolean;
  block: boolean;
  staging: string;
  target: string;
  cap: csi.VolumeCapability;
}

/** A lifecycle call: sent like any other, then `settle` updates the plan and may report a broken promise (lost data). */
export interface LifecycleCall extends FuzzCall {
  settle(ok: boolean): Promise<string | undefined>;
}

const DATA_BYTES = 256 * 1024;

export class Lifecycles {
  private readonly live: Live[] = [];
  private serial = 0;
  /** Steps that failed with an allowed code (hostile calls may have moved the volume first). */
  stepFailures: string[] = [];
  completed = 0;

  constructor(
    private readonly rng: FuzzRandom,
    private readonly paths: { staging(tag: string): string; target(tag: string): string },
    private readonly opts: { ext4GrowsOnline: boolean; inlineAllowed: boolean },
  ) {}

  ids(): string[] { return this.live.filter((l) => l.id !== '').map((l) => l.id); }

  /** Forgets every lifecycle in progress (a drain removes their volumes) and returns their ids. */
  abandon(): string[] {
    const ids = this.ids();
    this.live.length = 0;
    return ids;
  }

  /** The lifecycle volumes as they stand, for near-valid hostile calls that change one field of a real request. */
  views(): LiveView[] {
    return this.live.filter((l) => l.id !== '').map((l) => ({
      id: l.id, name: l.name, bytes: l.bytes, inline: l.access === 'inline', block: l.access === 'block',
      staging: l.staging, target: l.target, cap: this.cap(l),
    }));
  }
  livePaths(): string[] { return this.live.flatMap((l) => [l.staging, l.target, l.roTarget]); }

  private start(): Live {
    const n = this.serial++;
    const access = this.rng.weighted<Access>([[5, 'ext4'], [1, 'xfs'], [2, 'block'], [this.opts.inlineAllowed ? 2 : 0, 'inline']]);
    const l: Live = {
      n, access, name: `life-${n}`, id: access === 'inline' ? `csi-life${n.toString(16).padStart(8, '0')}` : '',
      bytes: access === 'xfs' ? 300 * MiB : this.rng.between(16, 48) * MiB,
      staging: this.paths.staging(`life-${n}`), target: this.paths.target(`life-${n}`), roTarget: this.paths.target(`life-${n}-ro`),
      step: 0, broken: false,
    };
    this.live.push(l);
    return l;
  }

  next(): LifecycleCall {
    const l = this.live.length < 2 || this.rng.chance(0.2) && this.live.length < 4 ? this.start() : this.rng.pick(this.live);
    return this.callFor(l);
  }

  private cap(l: Live, mode: 'SINGLE_NODE_WRITER' | 'SINGLE_NODE_MULTI_WRITER' = 'SINGLE_NODE_WRITER'): csi.VolumeCapability {
    if (l.access === 'block') return { block: {}, access_mode: { mode } };
    return { mount: { fs_type: l.access === 'xfs' ? 'xfs' : 'ext4', mount_flags: [] }, access_mode: { mode } };
  }

  private callFor(l: Live): LifecycleCall {
    let plan = PLAN[l.access];
    if (l.access === 'ext4' && !this.opts.ext4GrowsOnline) plan = plan.filter((s) => s !== 'expand');
    // A broken plan only tears down; the calls may fail for the same reason the step did.
    const step = plan[l.step] as Step;
    const call = this.request(l, step);
    const advance = () => {
      l.step++;
      if (l.step >= plan.length) {
        this.live.splice(this.live.indexOf(l), 1);
        if (!l.broken) this.completed++;
      }
    };
    return {
      ...call,
      settle: async (ok) => {
        let problem: string | undefined;
        if (ok) problem = await this.after(l, step);
        else {
          this.stepFailures.push(`${l.name} ${step}`);
          if (step === 'create') { this.live.splice(this.live.indexOf(l), 1); return undefined; }
          if (!l.broken) {
            l.broken = true;
            // Skip to the teardown steps.
            const teardownAt = plan.findIndex((s) => s.startsWith('unpublish') || s === 'unstage' || s === 'delete');
            if (l.step < teardownAt) { l.step = teardownAt; return undefined; }
          }
        }
        advance();
        return problem;
      },
    };
  }

  private request(l: Live, step: Step): FuzzCall {
    const mk = (rpc: string, request: unknown, send: (c: CsiClient, o: CallOptions) => Promise<unknown>): FuzzCall => ({ rpc, request, big: false, send });
    switch (step) {
      case 'create': {
        const req = { name: l.name, capacity_range: { required_bytes: l.bytes }, volume_capabilities: [this.cap(l)], parameters: {} };
        return mk('CreateVolume', req, async (c, o) => { const r = await c.createVolume(req, o); l.id = r.volume?.volume_id ?? ''; return r; });
      }
      case 'stage': {
        const req = { volume_id: l.id, staging_target_path: l.staging, volume_capability: this.cap(l) };
        return mk('NodeStageVolume', req, (c, o) => c.nodeStageVolume(req, o));
      }
      case 'publish': {
        const req = l.access === 'inline'
          ? { volume_id: l.id, target_path: l.target, volume_capability: this.cap(l), volume_context: { 'csi.storage.k8s.io/ephemeral': 'true', size: `${l.bytes / MiB}Mi` } }
          : { volume_id: l.id, staging_target_path: l.staging, target_path: l.target, volume_capability: this.cap(l) };
        return mk('NodePublishVolume', req, (c, o) => c.nodePublishVolume(req, o));
      }
      case 'publish-ro': {
        const req = { volume_id: l.id, staging_target_path: l.staging, target_path: l.roTarget, volume_capability: this.cap(l, 'SINGLE_NODE_MULTI_WRITER'), readonly: true };
        return mk('NodePublishVolume', req, (c, o) => c.nodePublishVolume(req, o));
      }
      case 'expand': {
        const bytes = l.bytes + (l.access === 'xfs' ? 32 : 16) * MiB;
        const req = { volume_id: l.id, capacity_range: { required_bytes: bytes } };
        const nreq = { volume_id: l.id, volume_path: l.target, capacity_range: { required_bytes: bytes }, volume_capability: this.cap(l) };
        return mk('ControllerExpandVolume+NodeExpandVolume', nreq, async (c, o) => {
          await c.controllerExpandVolume(req, o);
          const r = await c.nodeExpandVolume(nreq, o);
          l.bytes = bytes;
          return r;
        });
      }
      case 'check':
        return mk('NodeGetVolumeStats', { volume_id: l.id, volume_path: l.target }, (c, o) => c.nodeGetVolumeStats({ volume_id: l.id, volume_path: l.target }, o));
      case 'unpublish-ro':
        return mk('NodeUnpublishVolume', { volume_id: l.id, target_path: l.roTarget }, (c, o) => c.nodeUnpublishVolume({ volume_id: l.id, target_path: l.roTarget }, o));
      case 'unpublish':
        return mk('NodeUnpublishVolume', { volume_id: l.id, target_path: l.target }, (c, o) => c.nodeUnpublishVolume({ volume_id: l.id, target_path: l.target }, o));
      case 'unstage':
        return mk('NodeUnstageVolume', { volume_id: l.id, staging_target_path: l.staging }, (c, o) => c.nodeUnstageVolume({ volume_id: l.id, staging_target_path: l.staging }, o));
      case 'delete':
        return mk('DeleteVolume', { volume_id: l.id }, (c, o) => c.deleteVolume({ volume_id: l.id }, o));
    }
  }

  /** Writes data after the first publish and reads it back after expansion and hostile calls. */
  private async after(l: Live, step: Step): Promise<string | undefined> {
    if (step === 'publish') {
      const data = this.rng.bytes(DATA_BYTES);
      l.hash = createHash('sha256').update(data).digest('hex');
      await writeVolumeData(l.target, l.access === 'block', data);
      return undefined;
    }
    if (step !== 'check' || l.hash === undefined) return undefined;
    // A hostile call may have unpublished the target (a valid call, if it names it): then there is nothing to read there.
    if (!(await mountLines()).some((m) => m.mountPoint === l.target)) return undefined;
    const got = await volumeDataHash(l.target, l.access === 'block', DATA_BYTES);
    return got === l.hash ? undefined : `${l.name} (${l.access}, ${l.id}): the data written after publish changed (sha256 ${got.slice(0, 12)} != ${l.hash.slice(0, 12)})`;
  }
}

