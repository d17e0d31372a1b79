// The CSI Node service: stage (attach, format once, mount), publish (bind), inline ephemeral volumes, stats, expansion.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type * as csi from '../csi/types.js';
import type { Pool } from '../pool/pool.js';
import { formatSize } from '../pool/sizes.js';
import { PoolFullError } from '../pool/volume-catalog.js';
import type { Publication, VolumeRecord } from '../pool/volume-record.js';
import { deviceNumber } from '../sys/device-id.js';
import { filesystemErrorCount, growFilesystem, growUnmountedExt4, makeFilesystem, OnlineGrowRefused } from '../sys/filesystem.js';
import { bindMount, findMount, mountAt, mountDevice, readMountTable, type MountEntry } from '../sys/mounts.js';
import { run } from '../sys/exec.js';
import { backingFileOf } from '../sys/loop.js';
import { failpoint } from '../util/failpoint.js';
import { isReadOnlyMode, requireCapability, type Capability } from './capability.js';
import type { DriverContext } from './context.js';
import { alreadyExists, failedPrecondition, invalidArgument, notFound, resourceExhausted } from './errors.js';
import { growBacking } from './expansion.js';
import { EPHEMERAL_KEY, poolMissing, readInlineAttributes } from './parameters.js';
import { chooseSize, readRange } from './sizing.js';
import { isInside, requireResolvedTargetPath, requireVolumeId, resolveExisting } from './validate.js';

export const NODE_CAPABILITIES = [
  'STAGE_UNSTAGE_VOLUME',
  'GET_VOLUME_STATS',
  'EXPAND_VOLUME',
  'VOLUME_CONDITION',
  'SINGLE_NODE_MULTI_WRITER',
] as const;

function sameFlags(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && [...a].sort().join(',') === [...b].sort().join(',');
}

/** Removes the directory or empty device file the driver made at a target; never anything with content. */
async function removeTarget(target: string): Promise<void> {
  let st;
  try {
    st = await fs.lstat(target);
  } catch {
    return;
  }
  if (st.isDirectory()) await fs.rmdir(target).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOENT') throw failedPrecondition(`cannot remove ${target}: ${err.message}`);
  });
  else if (st.isFile() && st.size === 0) await fs.unlink(target).catch(() => undefined);
}

async function unmount(target: string): Promise<void> {
  await run('umount', [target], { timeoutMs: 120_000 });
}

function readOnlyMount(m: MountEntry): boolean {
  return m.options.includes('ro');
}

export function nodeService(ctx: DriverContext) {
  const { catalog } = ctx;
  const checkPath = (p: string, field: string) => requireResolvedTargetPath(p, field, ctx.targetRoots(), catalog.poolDirs());

  /**
   * Mounting at `p` must neither hide the mounts below it (another volume's staging mount or
   * publication) nor land inside a Lode volume (the mkdir and the mount would write into that
   * volume's filesystem and pin it).
   */
  async function refuseNesting(p: string, mounts: readonly MountEntry[]): Promise<void> {
    for (const e of mounts) {
      if (isInside(e.mountPoint, p)) throw failedPrecondition(`${e.mountPoint} is mounted below ${p}; mounting there would hide it`);
      if (isInside(p, e.mountPoint) && /^\/dev\/loop\d+$/.test(e.source)) {
        const backing = await backingFileOf(e.source);
        if (backing !== undefined && catalog.poolDirs().some((dir) => isInside(backing, dir))) {
          throw failedPrecondition(`${p} lies inside ${e.mountPoint}, a Lode volume; mounting there would write into it`);
        }
      }
    }
  }

  function volume(id: string): VolumeRecord {
    const r = catalog.get(id);
    if (!r || r.state !== 'ready') throw notFound(`volume ${id} does not exist on node ${ctx.config.nodeId}`);
    return r;
  }

  /** True when the mount at a target is this volume's: same filesystem, or a bind of one of its devices. */
  async function belongsTo(m: MountEntry, r: VolumeRecord, pool: Pool): Promise<boolean> {
    const devices = [await pool.device(r), ...r.publications.map((p) => p.device)].filter((d): d is string => d !== undefined);
    for (const d of devices) {
      if (m.devId === (await deviceNumber(d))) return true;
      if (m.root === '/' + path.basename(d)) return true;
    }
    return false;
  }

  async function stage(req: csi.NodeStageVolumeRequest__Output): Promise<csi.NodeStageVolumeResponse> {
    const id = requireVolumeId(req.volume_id);
    const staging = await checkPath(req.staging_target_path, 'staging_target_path');
    const cap = requireCapability(req.volume_capability, 'volume_capability');
    return ctx.locks.with([id], async () => {
      const r = volume(id);
      // One look at the mount table per call: the checks below all read the same snapshot.
      const mounts = await readMountTable();
      if (r.ephemeral) throw failedPrecondition(`volume ${id} is an inline ephemeral volume; it is never staged`);
      if (cap.accessType !== r.accessType) throw invalidArgument(`volume ${id} was created for ${r.accessType} access, not ${cap.accessType}`);
      const pool = catalog.pool(r.pool);
      if (r.staging !== null && r.staging !== staging) {
        const stillThere = r.accessType === 'mount' ? mountAt(mounts, r.staging) : await pool.device(r);
        if (stillThere) throw failedPrecondition(`volume ${id} is already staged at ${r.staging}`);
      }
      const fsType = r.accessType === 'block' ? '' : (cap.fsType || r.fsType || 'ext4');
      if (r.formatted && fsType !== r.fsType) throw failedPrecondition(`volume ${id} holds ${r.fsType}; it cannot be staged as ${fsType}`);
      if (r.staging === staging && !sameFlags(r.stagingFlags, cap.mountFlags)) {
        if (r.accessType === 'block' || mountAt(mounts, staging)) {
          throw alreadyExists(`volume ${id} is staged at ${staging} with other mount flags (${r.stagingFlags.join(',') || 'none'})`);
        }
      }
      // Checked before attaching or formatting anything, so a refused stage leaves no loop device behind.
      const occupied = r.accessType === 'mount' ? mountAt(mounts, staging) : undefined;
      if (occupied) {
        const own = await pool.device(r);
        if (own === undefined || occupied.devId !== (await deviceNumber(own))) throw failedPrecondition(`another filesystem is mounted at ${staging}`);
      } else {
        await refuseNesting(staging, mounts);
      }
      // A missing or truncated image is the node's state, not a fault of the call.
      const broken = await pool.problem(r);
      if (broken !== undefined) throw failedPrecondition(`volume ${id} cannot be staged: ${broken}`);
      const device = await pool.attach(r);
      failpoint('stage:attached');
      await fs.mkdir(staging, { recursive: true });
      // Whether the record must reach the disk before we answer: "formatted" must, or a
      // power loss could make a later stage format over the user's data.
      let durable = false;
      if (r.accessType === 'mount' && fsType !== '') {
        const m = occupied;
        const mountedHere = m !== undefined && m.devId === (await deviceNumber(device));
        if (!r.formatted) {
          // Format once: the record, not a probe of the device, says whether this volume
          // was ever formatted. A crash before the record is saved only repeats the mkfs of
          // a volume nobody could have written to yet (stage never returned) - unless the
          // crash came after the mount, in which case the filesystem is there already.
          if (!mountedHere) await makeFilesystem(device, fsType);
          failpoint('stage:formatted');
          r.formatted = true;
          r.fsType = fsType;
          r.filesystemBytes = r.capacityBytes;
          durable = true;
        }
        const needsGrow = (r.filesystemBytes ?? r.capacityBytes) < r.capacityBytes;
        if (m) {
          if (!mountedHere) throw failedPrecondition(`another filesystem is mounted at ${staging}`);
        } else {
          // A volume expanded while not staged grows here, before anyone uses it.
          if (needsGrow && fsType === 'ext4') await growUnmountedExt4(device);
          const opts = [isReadOnlyMode(cap.mode) ? 'ro' : 'rw', ...cap.mountFlags];
          await mountDevice(device, staging, fsType, opts);
          failpoint('stage:mounted');
        }
        if (needsGrow) {
          if (fsType === 'xfs') await growFilesystem(device, staging, 'xfs');
          r.filesystemBytes = r.capacityBytes;
        }
      }
      r.staging = staging;
      r.stagingFlags = cap.mountFlags;
      await catalog.save(r, durable);
      return {};
    });
  }

  async function unstage(req: csi.NodeUnstageVolumeRequest__Output): Promise<csi.NodeUnstageVolumeResponse> {
    const id = requireVolumeId(req.volume_id);
    const staging = await checkPath(req.staging_target_path, 'staging_target_path');
    return ctx.locks.with([id], async () => {
      const r = catalog.get(id);
      const mounts = await readMountTable();
      const m = mountAt(mounts, staging);
      if (!r || r.state !== 'ready') {
        if (m) throw notFound(`volume ${id} does not exist; the mount at ${staging} is left alone`);
        return {};
      }
      if (r.staging !== null && r.staging !== staging) return {}; // staged elsewhere: nothing at this path is ours
      const live: Publication[] = [];
      for (const p of r.publications) if (mountAt(mounts, p.targetPath)) live.push(p);
      if (live.length > 0) throw failedPrecondition(`volume ${id} is still published at ${live.map((p) => p.targetPath).join(', ')}`);
      const pool = catalog.pool(r.pool);
      if (m) {
        if (!(await belongsTo(m, r, pool))) throw failedPrecondition(`the mount at ${staging} is not volume ${id}'s`);
        await unmount(staging);
        failpoint('unstage:unmounted');
      }
      await pool.detach(r);
      failpoint('unstage:detached');
      r.staging = null;
      r.stagingFlags = [];
      r.publications = [];
      await catalog.save(r, false);
      return {};
    });
  }

  async function publish(req: csi.NodePublishVolumeRequest__Output): Promise<csi.NodePublishVolumeResponse> {
    const id = requireVolumeId(req.volume_id);
    const target = await checkPath(req.target_path, 'target_path');
    const cap = requireCapability(req.volume_capability, 'volume_capability');
    const readOnly = req.readonly || isReadOnlyMode(cap.mode);
    if (req.volume_context[EPHEMERAL_KEY] === 'true') return publishInline(req, id, target, cap, readOnly);
    if (req.staging_target_path === '') throw invalidArgument('staging_target_path is required: this driver stages volumes (STAGE_UNSTAGE_VOLUME)');
    const staging = await checkPath(req.staging_target_path, 'staging_target_path');
    // A bind at, inside or over the staging path would stack on or hide the staging mount.
    if (target === staging || isInside(target, staging) || isInside(staging, target)) {
      throw invalidArgument(`target_path "${target}" must lie apart from staging_target_path "${staging}"`);
    }
    return ctx.locks.with([id], async () => {
      const r = volume(id);
      if (r.ephemeral) throw failedPrecondition(`volume ${id} is an inline ephemeral volume published elsewhere`);
      if (cap.accessType !== r.accessType) throw invalidArgument(`volume ${id} was created for ${r.accessType} access, not ${cap.accessType}`);
      if (r.staging !== staging) throw failedPrecondition(`volume ${id} is not staged at ${staging}; call NodeStageVolume first`);
      const pool = catalog.pool(r.pool);
      const mounts = await readMountTable();
      const stagingMount = r.accessType === 'mount' ? mountAt(mounts, staging) : undefined;
      if (r.accessType === 'mount' && !stagingMount) throw failedPrecondition(`volume ${id}'s staging mount at ${staging} is gone; stage it again`);
      const known = r.publications.find((p) => p.targetPath === target);
      const m = mountAt(mounts, target);
      if (m) {
        if (!known && !(await belongsTo(m, r, pool))) throw failedPrecondition(`something else is mounted at ${target}`);
        // A read-only raw block publication is a read-write bind of a read-only device, so the record says which it is.
        const publishedReadOnly = r.accessType === 'block' && known ? known.readOnly : readOnlyMount(m);
        if (publishedReadOnly !== readOnly) throw alreadyExists(`volume ${id} is published at ${target} ${publishedReadOnly ? 'read-only' : 'read-write'}`);
        if (!known) {
          r.publications.push({ targetPath: target, readOnly });
          await catalog.save(r, false);
        }
        return {};
      }
      await refuseNesting(target, mounts);
      const pub: Publication = { targetPath: target, readOnly };
      if (r.accessType === 'mount') {
        await fs.mkdir(target, { recursive: true });
        await bindMount(staging, target, readOnly, cap.mountFlags);
        failpoint('publish:mounted');
      } else {
        // A read-only raw block publication gets its own read-only loop device: a read-only
        // bind of a writable device node would still let the pod write.
        const device = readOnly ? await pool.attach(r, true) : (await pool.device(r)) ?? (await pool.attach(r));
        if (readOnly) pub.device = device;
        await fs.mkdir(path.dirname(target), { recursive: true });
        await (await fs.open(target, 'a', 0o600)).close();
        await bindMount(device, target, false);
      }
      r.publications = [...r.publications.filter((p) => p.targetPath !== target), pub];
      await catalog.save(r, false);
      return {};
    });
  }

  async function publishInline(
    req: csi.NodePublishVolumeRequest__Output, id: string, target: string, cap: Capability, readOnly: boolean,
  ): Promise<csi.NodePublishVolumeResponse> {
    if (cap.accessType !== 'mount') throw invalidArgument('inline ephemeral volumes are filesystems; block access is not supported');
    const attrs = readInlineAttributes(req.volume_context, catalog);
    const missing = poolMissing(attrs, catalog);
    if (missing !== undefined) throw resourceExhausted(`${missing}; the inline volume cannot be made on node ${ctx.config.nodeId}`);
    return ctx.locks.with([id], async () => {
      const existing = catalog.get(id);
      const mounts = await readMountTable();
      if (existing && !existing.ephemeral) throw alreadyExists(`volume ${id} is a persistent volume, not an inline ephemeral one`);
      if (existing) {
        const pub = existing.publications[0];
        if (pub && pub.targetPath !== target) throw failedPrecondition(`inline volume ${id} is published at ${pub.targetPath}`);
        const m = mountAt(mounts, target);
        if (m) {
          if (readOnlyMount(m) !== readOnly) throw alreadyExists(`inline volume ${id} is published ${readOnlyMount(m) ? 'read-only' : 'read-write'}`);
          return {};
        }
        // Mount lost (a reboot): mount the existing filesystem again.
        const device = await catalog.pool(existing.pool).attach(existing);
        await fs.mkdir(target, { recursive: true });
        await mountDevice(device, target, existing.fsType || 'ext4', [readOnly ? 'ro' : 'rw', ...cap.mountFlags]);
        return {};
      }
      if (mountAt(mounts, target)) throw failedPrecondition(`something else is mounted at ${target}`);
      await refuseNesting(target, mounts);
      const pool = catalog.pool(attrs.pool).config;
      const fsType = cap.fsType || attrs.fsType || 'ext4';
      const size = chooseSize({ required: attrs.sizeBytes ?? 0, limit: 0 }, pool, fsType);
      if (pool.maxVolumeBytes !== undefined && size > pool.maxVolumeBytes) {
        throw resourceExhausted(`pool ${pool.name} makes volumes up to ${formatSize(pool.maxVolumeBytes)}; ${formatSize(size)} asked`);
      }
      const record: VolumeRecord = {
        version: 1, id, name: id, pool: pool.name, capacityBytes: size, state: 'creating', accessType: 'mount',
        fsType, formatted: false, parameters: { ...req.volume_context }, ephemeral: true,
        createdAt: new Date().toISOString(), staging: null, stagingFlags: cap.mountFlags,
        publications: [{ targetPath: target, readOnly }],
      };
      try {
        await catalog.provision(record, async (rec, p) => {
          const device = await p.attach(rec);
          await makeFilesystem(device, fsType);
          rec.formatted = true;
          rec.filesystemBytes = rec.capacityBytes;
          await fs.mkdir(target, { recursive: true });
          await mountDevice(device, target, fsType, [readOnly ? 'ro' : 'rw', ...cap.mountFlags]);
          failpoint('inline:mounted');
        });
      } catch (err) {
        if (err instanceof PoolFullError) {
          throw resourceExhausted(`pool ${err.pool} on node ${ctx.config.nodeId} has ${formatSize(err.available)} free; inline volume needs ${formatSize(err.requested)}`);
        }
        await removeTarget(target);
        throw err;
      }
      return {};
    });
  }

  async function unpublish(req: csi.NodeUnpublishVolumeRequest__Output): Promise<csi.NodeUnpublishVolumeResponse> {
    const id = requireVolumeId(req.volume_id);
    const target = await checkPath(req.target_path, 'target_path');
    return ctx.locks.with([id], async () => {
      const r = catalog.get(id);
      // The snapshot stays good for refuseNesting after our own unmount: that only removes the
      // mount at the target itself, and refuseNesting looks below and above it.
      const mounts = await readMountTable();
      const m = mountAt(mounts, target);
      if (!r) {
        if (m) throw notFound(`volume ${id} does not exist; the mount at ${target} is left alone`);
        await refuseNesting(target, mounts); // an empty file or directory inside a volume is a pod's, not a target
        await removeTarget(target);
        return {};
      }
      const pool = catalog.pool(r.pool);
      const pub = r.publications.find((p) => p.targetPath === target);
      if (m) {
        // The staging mount is the volume's too, but only NodeUnstageVolume may take it down.
        if (!pub && target === r.staging) throw failedPrecondition(`${target} is where volume ${id} is staged, not published; use NodeUnstageVolume`);
        if (!pub && !(await belongsTo(m, r, pool))) throw failedPrecondition(`the mount at ${target} is not volume ${id}'s`);
        await unmount(target);
        failpoint('unpublish:unmounted');
      }
      await refuseNesting(target, mounts);
      await removeTarget(target);
      if (pub?.device) await pool.detachDevice(pub.device);
      if (r.ephemeral) {
        // Only unpublishing its own target ends an inline volume: a call naming another path
        // must not delete the image under the pod that still has it mounted.
        if (pub) await catalog.destroy(r);
        return {};
      }
      if (pub) {
        r.publications = r.publications.filter((p) => p !== pub);
        await catalog.save(r, false);
      }
      return {};
    });
  }

  function pathsOf(r: VolumeRecord): string[] {
    return [...r.publications.map((p) => p.targetPath), ...(r.staging ? [r.staging] : [])];
  }

  async function requirePathOf(r: VolumeRecord, p: string): Promise<string> {
    // Records hold resolved paths (see requireResolvedTargetPath), so the caller's is resolved too.
    const normal = path.isAbsolute(p) ? await resolveExisting(path.normalize(p).replace(/(.)\/+$/, '$1')) : p;
    if (!pathsOf(r).includes(normal)) throw notFound(`volume ${r.id} is not staged or published at "${p}"`);
    return normal;
  }

  async function getVolumeStats(req: csi.NodeGetVolumeStatsRequest__Output): Promise<csi.NodeGetVolumeStatsResponse> {
    const id = requireVolumeId(req.volume_id);
    if (req.volume_path === '') throw invalidArgument('volume_path is required');
    const r = volume(id);
    const volumePath = await requirePathOf(r, req.volume_path);
    const pool = catalog.pool(r.pool);
    let problem = await pool.problem(r);
    const m = await findMount(volumePath);
    if (!problem && !m && (r.accessType === 'mount' || volumePath !== r.staging)) problem = `${volumePath} is not mounted`;
    if (r.accessType === 'block') {
      return {
        usage: [{ unit: 'BYTES', total: String(r.capacityBytes) }],
        volume_condition: { abnormal: problem !== undefined, message: problem ?? 'healthy' },
      };
    }
    let s;
    try {
      s = await fs.statfs(volumePath);
    } catch (err) {
      throw notFound(`volume path ${volumePath}: ${(err as Error).message}`);
    }
    if (!problem && m && m.source.startsWith('/dev/loop')) {
      const errors = await filesystemErrorCount(m.source);
      if (errors > 0) problem = `the filesystem reported ${errors} error(s); check the kernel log and run fsck`;
    }
    return {
      usage: [
        { unit: 'BYTES', total: String(s.blocks * s.bsize), available: String(s.bavail * s.bsize), used: String((s.blocks - s.bfree) * s.bsize) },
        { unit: 'INODES', total: String(s.files), available: String(s.ffree), used: String(s.files - s.ffree) },
      ],
      volume_condition: { abnormal: problem !== undefined, message: problem ?? 'healthy' },
    };
  }

  async function expand(req: csi.NodeExpandVolumeRequest__Output): Promise<csi.NodeExpandVolumeResponse> {
    const id = requireVolumeId(req.volume_id);
    if (req.volume_path === '') throw invalidArgument('volume_path is required');
    const range = readRange(req.capacity_range);
    if (req.volume_capability) requireCapability(req.volume_capability, 'volume_capability');
    return ctx.locks.with([id], async () => {
      const r = volume(id);
      const volumePath = await requirePathOf(r, req.volume_path);
      // Kubernetes' resizer never calls ControllerExpandVolume on this node (see
      // controllerCapabilities), so the node grows the image itself.
      if (range.required > r.capacityBytes) await growBacking(ctx, r, range);
      const pool = catalog.pool(r.pool);
      await pool.refreshDevice(r);
      if (r.accessType === 'mount') {
        const m = await findMount(volumePath);
        if (!m) throw failedPrecondition(`volume ${id} is not mounted at ${volumePath}`);
        try {
          await growFilesystem(m.source, volumePath, r.fsType || 'ext4');
        } catch (err) {
          if (err instanceof OnlineGrowRefused) {
            throw failedPrecondition(`${err.message}; it will grow offline the next time the volume is staged`);
          }
          throw err;
        }
        if (r.filesystemBytes !== r.capacityBytes) {
          r.filesystemBytes = r.capacityBytes;
          await catalog.save(r, false);
        }
      }
      return { capacity_bytes: String(r.capacityBytes) };
    });
  }

  return {
    NodeStageVolume: stage,
    NodeUnstageVolume: unstage,
    NodePublishVolume: publish,
    NodeUnpublishVolume: unpublish,
    NodeGetVolumeStats: getVolumeStats,
    NodeExpandVolume: expand,
    NodeGetCapabilities: async (): Promise<csi.NodeGetCapabilitiesResponse> => ({
      capabilities: NODE_CAPABILITIES.map((type) => ({ rpc: { type } })),
    }),
    NodeGetInfo: async (): Promise<csi.NodeGetInfoResponse> => ({
      node_id: ctx.config.nodeId,
      max_volumes_per_node: '0',
      accessible_topology: ctx.topology(),
    }),
  };
}
