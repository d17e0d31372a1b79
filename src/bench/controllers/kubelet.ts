// kubelet's volume manager for one node: NodeStage/NodePublish at kubelet paths, inline ephemeral volumes, a real write/read and size check, teardown.
import { createHash } from 'node:crypto';
import { mkdir, readFile, rm, statfs, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { V1CSIDriver, V1Pod, V1Volume } from '@kubernetes/client-node';
import { Controller } from '../runtime/controller.js';
import type { BenchContext } from '../runtime/context.js';
import type { NodeDriver } from '../nodes/node-driver.js';
import { EPHEMERAL_CONTEXT_KEY } from '../api/annotations.js';
import { splitKey } from '../api/kinds.js';
import { podKey, requestedBytes, volumeClaimName } from '../api/pod-helpers.js';
import { parseQuantity, humanBytes } from '../../util/quantity.js';
import { rpcErrorText } from '../nodes/csi-errors.js';
import { isFullyBound } from './scheduler/volume-binding.js';
import { podDataPlan, verifyData, writeData } from './volume-data.js';
import { containerKilledStatus, containerRestartedStatus, runningPodStatus } from './kubelet-pod-status.js';
import { doublingDelayMs } from '../runtime/backoff.js';

/** Volume manager retry: 500 ms doubling to 2m2s (exponentialbackoff in nestedpendingoperations). */
const RETRY_START_MS = 500;
const RETRY_MAX_MS = 122_000;
/**
 * What a fresh filesystem may keep for itself: ext4's journal, inode tables and reserved
 * blocks take 14-23% of a small device (16Mi shows 13.7Mi in statfs, 24Mi 18.5Mi, 200Mi
 * 182Mi), so the check allows 20% or 8Mi, whichever is more.
 */
export function minimumFsBytes(requestBytes: number): number {
  return requestBytes - Math.max(requestBytes * 0.2, 8 * 2 ** 20);
}
const CHECK_FILE = '.lode-bench-check';

/** A volume published for a pod. */
export interface MountedVolume {
  podKey: string;
  podUid: string;
  volumeName: string;
  handle: string;
  targetPath: string;
  stagingPath: string | undefined;
  inline: boolean;
  requestBytes: number;
  /** What the check wrote: read back after a driver restart to prove no data was lost. */
  content: string;
  fsBytes: number;
  /** The pod that last wrote this volume's check file, when it was there before this mount. */
  earlier?: string | undefined;
  /** The write/read and size check passed. */
  verified?: boolean;
}

/** A prepared mount: what NodeStage/NodePublish need for one pod volume. */
interface MountPlan {
  volumeName: string;
  handle: string;
  inline: boolean;
  fsType: string;
  /** The PV's spec.mountOptions, which kubelet passes to NodeStage and NodePublish. */
  mountFlags: string[];
  context: Record<string, string>;
  requestBytes: number;
  pvName?: string;
}

export class Kubelet extends Controller {
  private readonly source: string;
  /** podUid -> volumeName -> mount. */
  readonly mounted = new Map<string, Map<string, MountedVolume>>();
  /** volume handle -> staging path. */
  readonly staged = new Map<string, string>();
  private readonly podUids = new Map<string, string>();
  private readonly failures = new Map<string, number>();
  private readonly reportedErrors = new Map<string, string>();
  private readonly killing = new Set<string>();
  /** Pods of this node not Running yet. */
  private readonly waiting = new Set<string>();

  constructor(private readonly ctx: BenchContext, private readonly driver: NodeDriver) {
    super(`kubelet/${driver.nodeName}`, ctx.clock);
    this.source = `kubelet/${driver.nodeName}`;
    ctx.store.watch('Pod', (e) => {
      if (e.object.spec?.nodeName !== driver.nodeName) return;
      const key = podKey(e.object);
      if (e.type !== 'DELETED' && e.object.status?.phase !== 'Running') this.waiting.add(key);
      else this.waiting.delete(key);
      this.enqueue(key);
    });
    // A claim getting bound may unblock a pod of this node waiting for it.
    ctx.store.watch('PersistentVolumeClaim', (e) => {
      if (e.type === 'DELETED') return;
      for (const key of [...this.waiting].sort()) this.enqueue(key);
    });
  }

  stagingPath(handle: string): string {
    const digest = createHash('sha256').update(handle).digest('hex');
    return join(this.driver.kubeletDir, 'plugins', 'kubernetes.io', 'csi', this.ctx.driverName, digest, 'globalmount');
  }

  publishPath(podUid: string, volumeName: string): string {
    return join(this.driver.kubeletDir, 'pods', podUid, 'volumes', 'kubernetes.io~csi', volumeName, 'mount');
  }

  async reconcile(key: string): Promise<void> {
    const { namespace, name } = splitKey(key);
    const pod = this.ctx.store.get('Pod', name, namespace);
    if (pod === undefined) {
      // Gone without a graceful delete (force): still unmount what it had.
      const uid = this.podUids.get(key);
      if (uid !== undefined) await this.teardown(key, uid);
      return;
    }
    if (pod.spec?.nodeName !== this.driver.nodeName) return;
    const uid = pod.metadata?.uid ?? '';
    this.podUids.set(key, uid);
    if (pod.metadata?.deletionTimestamp) {
      if (!this.killing.has(key)) {
        this.killing.add(key);
        this.ctx.events.record(this.source, pod, 'Normal', 'Killing', `Stopping pod ${key}, unmounting its volumes`);
      }
      if (await this.teardown(key, uid)) {
        this.killing.delete(key);
        this.podUids.delete(key);
        this.ctx.store.forceDelete('Pod', name, namespace);
      }
      return;
    }
    if (pod.status?.phase === 'Running') return;
    await this.setUp(key, pod);
  }

  private plans(pod: V1Pod): MountPlan[] | string {
    const plans: MountPlan[] = [];
    const ns = pod.metadata?.namespace ?? 'default';
    const csiDriver = this.ctx.store.get('CSIDriver', this.ctx.driverName);
    const podInfo = csiDriver?.spec?.podInfoOnMount === true;
    const podContext = (ephemeral: boolean): Record<string, string> => podInfo ? {
      'csi.storage.k8s.io/pod.name': pod.metadata?.name ?? '',
      'csi.storage.k8s.io/pod.namespace': ns,
      'csi.storage.k8s.io/pod.uid': pod.metadata?.uid ?? '',
      'csi.storage.k8s.io/serviceAccount.name': pod.spec?.serviceAccountName ?? 'default',
      [EPHEMERAL_CONTEXT_KEY]: String(ephemeral),
    } : {};
    for (const v of pod.spec?.volumes ?? []) {
      const plan = this.planFor(pod, v, ns, csiDriver, podContext);
      if (typeof plan === 'string') return plan;
      if (plan !== undefined) plans.push(plan);
    }
    return plans;
  }

  private planFor(pod: V1Pod, v: V1Volume, ns: string, csiDriver: V1CSIDriver | undefined, podContext: (ephemeral: boolean) => Record<string, string>): MountPlan | string | undefined {
    const notRegistered = (driver: string): string => `volume "${v.name}": kubernetes.io/csi: driver name ${driver} not found in the list of registered CSI drivers`;
    if (v.csi) {
      if (v.csi.driver !== this.ctx.driverName || !this.driver.installed) return notRegistered(v.csi.driver);
      const modes = csiDriver?.spec?.volumeLifecycleModes ?? ['Persistent'];
      if (!modes.includes('Ephemeral')) return `volume "${v.name}": volume mode "Ephemeral" not supported by driver ${this.ctx.driverName} (only supports ${JSON.stringify(modes)})`;
      const attrs = { ...(v.csi.volumeAttributes ?? {}) };
      const handle = 'csi-' + createHash('sha256').update((pod.metadata?.uid ?? '') + v.name).digest('hex');
      return {
        volumeName: v.name, handle, inline: true, fsType: v.csi.fsType ?? '', mountFlags: [],
        context: { ...attrs, ...podContext(true), [EPHEMERAL_CONTEXT_KEY]: 'true' },
        requestBytes: attrs.size !== undefined ? parseQuantity(attrs.size) : 0,
      };
    }
    const claimName = volumeClaimName(pod, v);
    if (claimName === undefined) return undefined; // emptyDir, configMap...: nothing for a CSI driver to do
    const pvc = this.ctx.store.get('PersistentVolumeClaim', claimName, ns);
    if (pvc === undefined || !isFullyBound(pvc)) return `waiting for persistentvolumeclaim "${claimName}" to be bound`;
    const pv = this.ctx.store.get('PersistentVolume', pvc.spec?.volumeName ?? '');
    if (pv === undefined) return `persistentvolume "${pvc.spec?.volumeName}" not found`;
    if (pv.spec?.csi?.driver !== this.ctx.driverName) return `volume "${v.name}": only ${this.ctx.driverName} CSI volumes are mounted by the bench`;
    if (!this.driver.installed) return notRegistered(this.ctx.driverName);
    return {
      volumeName: v.name, handle: pv.spec.csi.volumeHandle, inline: false, fsType: pv.spec.csi.fsType ?? '', mountFlags: [...(pv.spec.mountOptions ?? [])],
      context: { ...(pv.spec.csi.volumeAttributes ?? {}), ...podContext(false) },
      requestBytes: requestedBytes(pvc) ?? 0,
      pvName: pv.metadata?.name,
    };
  }

  private async setUp(key: string, pod: V1Pod): Promise<void> {
    const uid = pod.metadata?.uid ?? '';
    const plans = this.plans(pod);
    if (typeof plans === 'string') {
      this.failed(key, pod, 'FailedMount', `Unable to attach or mount volumes: ${plans}`, plans.startsWith('waiting'));
      return;
    }
    const mine = this.mounted.get(uid) ?? new Map<string, MountedVolume>();
    this.mounted.set(uid, mine);
    for (const plan of plans) {
      const already = mine.get(plan.volumeName);
      if (already !== undefined) {
        if (already.verified) continue;
        // Published but its check failed: check again rather than start the pod on a bad volume.
        const problem = await this.check(already, key);
        if (problem !== undefined) {
          this.failed(key, pod, 'VolumeCheckFailed', `volume "${plan.volumeName}": ${problem}`);
          return;
        }
        already.verified = true;
        continue;
      }
      const capability = { mount: { fs_type: plan.fsType, mount_flags: plan.mountFlags }, access_mode: { mode: 'SINGLE_NODE_WRITER' as const } };
      let stagingPath: string | undefined;
      if (!plan.inline) {
        stagingPath = this.stagingPath(plan.handle);
        if (!this.staged.has(plan.handle)) {
          try {
            await mkdir(this.driver.view(stagingPath), { recursive: true });
            this.ctx.metrics.countDriverCall('NodeStageVolume');
            await this.driver.client.nodeStageVolume({ volume_id: plan.handle, staging_target_path: stagingPath, volume_capability: capability, volume_context: plan.context }, { timeoutMs: 120_000 });
            this.staged.set(plan.handle, stagingPath);
          } catch (err) {
            this.failed(key, pod, 'FailedMount', `MountVolume.MountDevice failed for volume "${plan.pvName ?? plan.volumeName}" : ${rpcErrorText(err)}`);
            return;
          }
        }
      }
      const targetPath = this.publishPath(uid, plan.volumeName);
      try {
        await mkdir(this.driver.view(join(targetPath, '..')), { recursive: true });
        this.ctx.metrics.countDriverCall('NodePublishVolume');
        await this.driver.client.nodePublishVolume({
          volume_id: plan.handle, target_path: targetPath, volume_capability: capability, readonly: false, volume_context: plan.context,
          ...(stagingPath !== undefined ? { staging_target_path: stagingPath } : {}),
        }, { timeoutMs: 120_000 });
      } catch (err) {
        this.failed(key, pod, 'FailedMount', `MountVolume.SetUp failed for volume "${plan.pvName ?? plan.volumeName}" : ${rpcErrorText(err)}`);
        return;
      }
      const m: MountedVolume = { podKey: key, podUid: uid, volumeName: plan.volumeName, handle: plan.handle, targetPath, stagingPath, inline: plan.inline, requestBytes: plan.requestBytes, content: '', fsBytes: 0 };
      mine.set(plan.volumeName, m);
      const problem = await this.check(m, key);
      if (problem !== undefined) {
        this.ctx.metrics.mountChecksFailed++;
        this.failed(key, pod, 'VolumeCheckFailed', `volume "${plan.volumeName}": ${problem}`);
        return;
      }
      m.verified = true;
      this.ctx.metrics.mountChecksPassed++;
    }
    const data = await this.dataActions(key, pod, mine);
    if (typeof data === 'string') {
      this.failed(key, pod, 'VolumeDataMismatch', data);
      return;
    }
    this.failures.delete(key);
    this.reportedErrors.delete(key);
    const ok = this.ctx.store.modify('Pod', pod.metadata?.name ?? '', pod.metadata?.namespace, (p) => {
      if (p.metadata?.deletionTimestamp || p.status?.phase === 'Running') return false;
      p.status = runningPodStatus(p, this.clock.date());
      return true;
    });
    if (ok !== undefined) {
      for (const [reason, message] of data) this.ctx.events.record(this.source, pod, 'Normal', reason, message);
      const sizes = [...mine.values()].map((m) => `${m.volumeName}=${humanBytes(m.fsBytes)}${m.earlier !== undefined ? `, data of ${m.earlier} found` : ''}`).join('; ');
      const what = mine.size === 0 ? 'no CSI volumes to mount' : `${mine.size} volume(s) mounted, written, read back (${sizes})`;
      this.ctx.events.record(this.source, pod, 'Normal', 'Started', `Started: ${what}`);
    }
  }

  /**
   * The bench's data annotations: write each named volume's file, then check each expected
   * one byte for byte. Returns the events to record once the pod runs, or why it must not.
   */
  private async dataActions(key: string, pod: V1Pod, mine: Map<string, MountedVolume>): Promise<[string, string][] | string> {
    const out: [string, string][] = [];
    try {
      const plan = podDataPlan(pod);
      const mountOf = (v: string): string => {
        const m = mine.get(v);
        if (m === undefined) throw new Error(`volume "${v}" is not a CSI volume of this pod`);
        return this.driver.view(m.targetPath);
      };
      for (const w of plan.writes) out.push(['VolumeDataWritten', await writeData(mountOf(w.volume), key, w)]);
      for (const e of plan.expects) {
        const [ok, message] = await verifyData(mountOf(e.volume), e);
        if (!ok) return message;
        out.push(['VolumeDataMatched', message]);
      }
    } catch (err) {
      return err instanceof Error ? err.message : String(err);
    }
    return out;
  }

  /** Writes a file into the volume, reads it back, and checks the volume is as large as asked. */
  private async check(m: MountedVolume, key: string): Promise<string | undefined> {
    try {
      const content = `${key} ${m.volumeName} ${m.handle}\n`;
      const file = this.driver.view(join(m.targetPath, CHECK_FILE));
      // A file left by an earlier pod proves the volume kept its data across pods.
      m.earlier = await readFile(file, 'utf8').then((t) => t.split(' ')[0] ?? '', () => undefined);
      await writeFile(file, content, { flush: true });
      const back = await readFile(file, 'utf8');
      if (back !== content) return `read back ${JSON.stringify(back)}, wrote ${JSON.stringify(content)}`;
      m.content = content;
      // The size as kubelet learns it, from NodeGetVolumeStats: a directory volume's statfs
      // would show its whole pool filesystem, its limit is what the driver reports.
      const stats = await this.driver.client.nodeGetVolumeStats({ volume_id: m.handle, volume_path: m.targetPath }, { timeoutMs: 60_000 });
      const total = stats.usage?.find((u) => u.unit === 'BYTES')?.total;
      m.fsBytes = total !== undefined ? Number(total) : await statfs(this.driver.view(m.targetPath)).then((s) => s.blocks * s.bsize);
      if (m.fsBytes < minimumFsBytes(m.requestBytes)) return `filesystem has ${humanBytes(m.fsBytes)}, asked for ${humanBytes(m.requestBytes)}`;
      return undefined;
    } catch (err) {
      return `write/read check failed: ${err instanceof Error ? err.message : String(err)}`;
    }
  }

  /**
   * A container of a pod of this node was killed (`restarted` false) or runs again (true): its
   * status as kubelet writes it, so `kubectl get pods` shows the pod not ready while its
   * container is down and counts the restart. A pod not Running yet is left to the start above.
   */
  containerState(pod: { name: string; namespace: string }, container: string, restarted: boolean): void {
    this.ctx.store.modify('Pod', pod.name, pod.namespace, (p) => {
      if (p.status?.phase !== 'Running' || p.spec?.nodeName !== this.driver.nodeName) return false;
      p.status = restarted ? containerRestartedStatus(p, container, this.clock.date()) : containerKilledStatus(p, container, this.clock.date());
      return true;
    });
  }

  /** Reads back every check file on this node: after a driver restart, proof that no data was lost. */
  async verifyData(): Promise<{ ok: number; lost: string[] }> {
    const lost: string[] = [];
    let ok = 0;
    for (const vols of this.mounted.values()) {
      for (const m of vols.values()) {
        if (m.content === '') continue;
        const back = await readFile(this.driver.view(join(m.targetPath, CHECK_FILE)), 'utf8').catch(() => undefined);
        if (back === m.content) ok++;
        else lost.push(`${m.podKey}/${m.volumeName}`);
      }
    }
    return { ok, lost };
  }

  private failed(key: string, pod: V1Pod, reason: string, message: string, quiet = false): void {
    const n = (this.failures.get(key) ?? 0) + 1;
    this.failures.set(key, n);
    // The same failure again is not logged again (kubectl shows it as a count).
    if (!quiet && this.reportedErrors.get(key) !== message) {
      this.reportedErrors.set(key, message);
      this.ctx.events.record(this.source, pod, 'Warning', reason, message);
    }
    this.enqueueAfter(key, doublingDelayMs(n, RETRY_START_MS, RETRY_MAX_MS));
  }

  /** NodeUnpublish every volume of the pod, NodeUnstage those no other pod here uses; false if a call failed. */
  private async teardown(key: string, uid: string): Promise<boolean> {
    const vols = this.mounted.get(uid);
    if (vols !== undefined) {
      for (const m of [...vols.values()]) {
        try {
          this.ctx.metrics.countDriverCall('NodeUnpublishVolume');
          await this.driver.client.nodeUnpublishVolume({ volume_id: m.handle, target_path: m.targetPath }, { timeoutMs: 120_000 });
        } catch (err) {
          this.ctx.events.record(this.source, { kind: 'Pod', metadata: splitKey(key) }, 'Warning', 'FailedUnmount', `UnmountVolume.TearDown failed for volume "${m.volumeName}" : ${rpcErrorText(err)}`);
          this.enqueueAfter(key, 2_000);
          return false;
        }
        vols.delete(m.volumeName);
        if (m.stagingPath !== undefined && !this.inUse(m.handle)) {
          try {
            this.ctx.metrics.countDriverCall('NodeUnstageVolume');
            await this.driver.client.nodeUnstageVolume({ volume_id: m.handle, staging_target_path: m.stagingPath }, { timeoutMs: 120_000 });
            this.staged.delete(m.handle);
            await rm(this.driver.view(join(m.stagingPath, '..')), { recursive: true, force: true });
          } catch (err) {
            this.ctx.events.record(this.source, { kind: 'Pod', metadata: splitKey(key) }, 'Warning', 'FailedUnmount', `UnmountDevice failed for volume "${m.volumeName}" : ${rpcErrorText(err)}`);
          }
        }
      }
      this.mounted.delete(uid);
    }
    // A volume staged for a publish that never succeeded is unstaged too, as kubelet's
    // reconciler unmounts devices no pod uses (another pod still waiting will stage again).
    for (const [handle, path] of [...this.staged]) {
      if (this.inUse(handle)) continue;
      try {
        this.ctx.metrics.countDriverCall('NodeUnstageVolume');
        await this.driver.client.nodeUnstageVolume({ volume_id: handle, staging_target_path: path }, { timeoutMs: 120_000 });
        this.staged.delete(handle);
        await rm(this.driver.view(join(path, '..')), { recursive: true, force: true });
      } catch { /* left for the bench teardown */ }
    }
    await rm(this.driver.view(join(this.driver.kubeletDir, 'pods', uid)), { recursive: true, force: true });
    this.failures.delete(key);
    this.reportedErrors.delete(key);
    return true;
  }

  private inUse(handle: string): boolean {
    for (const vols of this.mounted.values()) for (const m of vols.values()) if (m.handle === handle) return true;
    return false;
  }

  /** Unpublishes and unstages everything (bench teardown); errors are collected, not thrown. */
  async unmountAll(): Promise<string[]> {
    const errors: string[] = [];
    for (const [uid, vols] of [...this.mounted]) {
      for (const m of [...vols.values()]) {
        try {
          await this.driver.client.nodeUnpublishVolume({ volume_id: m.handle, target_path: m.targetPath }, { timeoutMs: 60_000 });
          vols.delete(m.volumeName);
        } catch (err) {
          errors.push(`${this.driver.nodeName}: NodeUnpublish ${m.targetPath}: ${rpcErrorText(err)}`);
        }
      }
      if (vols.size === 0) this.mounted.delete(uid);
    }
    for (const [handle, path] of [...this.staged]) {
      try {
        await this.driver.client.nodeUnstageVolume({ volume_id: handle, staging_target_path: path }, { timeoutMs: 60_000 });
        this.staged.delete(handle);
      } catch (err) {
        errors.push(`${this.driver.nodeName}: NodeUnstage ${path}: ${rpcErrorText(err)}`);
      }
    }
    return errors;
  }
}
