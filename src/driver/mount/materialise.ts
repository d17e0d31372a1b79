// How a volume appears on this node, for every kind of backend: a block device formatted once and mounted, a raw device, or a bind-mounted directory.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { Backend, BlockBackend } from '../../pool/backend.js';
import type { VolumeRecord } from '../../pool/volume-record.js';
import type { AnchoredPath } from '../../sys/beneath.js';
import { deviceNumber } from '../../sys/device-id.js';
import { filesystemErrorCount, growFilesystem, growUnmountedExt4, isFormattable, makeFilesystem, OnlineGrowRefused } from '../../sys/filesystem.js';
import { findMount, type MountEntry } from '../../sys/mounts.js';
import { outsideCall } from '../../util/call-signal.js';
import { failpoint } from '../../util/failpoint.js';
import { failedPrecondition, internal } from '../rpc/errors.js';
import { bindDirectory, mountFilesystem } from './mount-options.js';
import { DEFAULT_FS_TYPE } from '../request/pool-fit.js';

/** What a volume's mount should be: its filesystem, read-only or not, with the caller's flags. */
export interface MountRequest {
  fsType: string;
  readOnly: boolean;
  flags: readonly string[];
  /**
   * The volume is mounted at the entry already (a retry after a crash that came before the
   * record was saved): only what the record lacks is completed.
   */
  alreadyMounted?: boolean;
}

/**
 * Whether the mount `m` shows this volume: its filesystem or a bind of one of its devices
 * (block backends), or a bind of its directory (directory backends).
 */
export async function isVolumeMount(m: MountEntry, r: VolumeRecord, backend: Backend): Promise<boolean> {
  if (backend.kind === 'directory') return backend.holdsMount(m, r);
  const devices = [await backend.device(r), ...r.publications.map((p) => p.device)].filter((d): d is string => d !== undefined);
  for (const d of devices) {
    if (m.devId === (await deviceNumber(d))) return true;
    if (m.root === '/' + path.basename(d)) return true;
  }
  return false;
}

/**
 * Mounts of the volume in `mounts` at none of the paths in `expected`: a mount carried off its
 * path, by someone who renamed a directory above it while it was up. Detaching the device under
 * one would leave a filesystem mounted on a device a later stage attaches again beside it;
 * forgetting one would leave it up for good.
 */
export async function strayVolumeMounts(mounts: readonly MountEntry[], r: VolumeRecord, backend: Backend, expected: readonly string[]): Promise<MountEntry[]> {
  const candidates = mounts.filter((m) => !expected.includes(m.mountPoint));
  const stray: MountEntry[] = [];
  if (backend.kind === 'directory') {
    for (const m of candidates) if (await backend.holdsMount(m, r)) stray.push(m);
    return stray;
  }
  // Its filesystem mounted (the device's number), or its device node bound (a raw block
  // publication's root is the node's name): a node left bound after a detach would open
  // whichever volume is attached under that name next. The devices are looked up once for the
  // whole table, not once per mount as isVolumeMount would.
  const devices = [await backend.device(r), ...r.publications.map((p) => p.device)].filter((d): d is string => d !== undefined);
  const numbers = new Set<string>();
  for (const d of devices) numbers.add(await deviceNumber(d).catch(() => ''));
  const roots = new Set(devices.map((d) => '/' + path.basename(d)));
  for (const m of candidates) if (numbers.has(m.devId) || roots.has(m.root)) stray.push(m);
  return stray;
}

/** The volume's writable device when it is attached on this node (a staged raw block volume holds one with no mount). */
export async function attachedDevice(r: VolumeRecord, backend: Backend): Promise<string | undefined> {
  return backend.kind === 'block' ? backend.device(r) : undefined;
}

/**
 * Makes the volume's filesystem appear at `entry`, an opened, empty directory. A block volume
 * is attached, formatted the first time (the record, never a probe of the device, says whether
 * it ever was), grown if it was expanded while unmounted, and mounted; a directory volume is
 * bind-mounted. Returns true when the record changed in a way that must reach the disk before
 * the call answers ("formatted": a power loss must not let a later stage format over data).
 */
export async function mountVolume(entry: AnchoredPath, r: VolumeRecord, backend: Backend, want: MountRequest): Promise<boolean> {
  if (backend.kind === 'directory') {
    if (want.alreadyMounted) return false;
    await bindDirectory(entry, backend.directory(r), want.readOnly, want.flags);
    return false;
  }
  const fsType = want.fsType;
  if (!isFormattable(fsType)) throw failedPrecondition(`volume ${r.id} cannot hold ${fsType}: Lode formats block volumes with ext4 or xfs`);
  const device = await backend.attach(r);
  failpoint('stage:attached');
  let durable = false;
  if (!r.formatted) {
    // A crash before the record is saved only repeats the mkfs of a volume nobody could have
    // written to yet: the call that formats never returned. Unless the crash came after the
    // mount: then the filesystem is there already.
    if (!want.alreadyMounted) await makeFilesystem(device, fsType);
    failpoint('stage:formatted');
    r.formatted = true;
    r.fsType = fsType;
    r.filesystemBytes = r.capacityBytes;
    durable = true;
  }
  // A volume expanded while not mounted grows here, before anyone uses it (xfs grows only mounted).
  const needsGrow = (r.filesystemBytes ?? r.capacityBytes) < r.capacityBytes;
  if (!want.alreadyMounted) {
    if (needsGrow && fsType === 'ext4') await growUnmountedExt4(device);
    // A mount that failed, or came out writable and was taken down, leaves nothing mounted.
    await mountFilesystem(entry, device, fsType, want.readOnly, want.flags);
    failpoint('stage:mounted');
  }
  if (needsGrow) {
    // A mount point cannot be renamed or replaced, so its real path is safe to name here.
    if (fsType === 'xfs') await growFilesystem(device, entry.path, 'xfs');
    r.filesystemBytes = r.capacityBytes;
  }
  return durable;
}

/** For a raw block stage: the volume's writable device, attached if it is not. */
export async function stageDevice(r: VolumeRecord, backend: Backend): Promise<string> {
  const device = await blockOf(r, backend).attach(r);
  failpoint('stage:attached');
  return device;
}

/**
 * The device a raw block publication binds: a read-only publication gets a read-only device
 * of its own, since a read-only bind of a writable device node still lets the pod write.
 */
export async function publicationDevice(r: VolumeRecord, backend: Backend, readOnly: boolean): Promise<string> {
  const block = blockOf(r, backend);
  if (readOnly) return block.attach(r, true);
  return (await block.device(r)) ?? block.attach(r);
}

/** The backend of a raw block volume; CreateVolume refuses raw block on any other, so this is a record that says otherwise. */
function blockOf(r: VolumeRecord, backend: Backend): BlockBackend {
  if (backend.kind !== 'block') throw failedPrecondition(`pool ${backend.config.name} holds directories; volume ${r.id} has no block device`);
  return backend;
}

/** Lets go of a read-only raw block publication's own device. */
export async function releasePublicationDevice(backend: Backend, device: string): Promise<void> {
  if (backend.kind === 'block') await backend.detachDevice(device);
}

/** Undoes what staging set up on the node beside the mount (a block volume's devices); the caller unmounted. */
export async function releaseFromNode(r: VolumeRecord, backend: Backend): Promise<void> {
  if (backend.kind === 'block') await backend.detach(r);
}

/** The same as the undo of a failed stage: also after the call's deadline killed it. */
export function undoAttach(r: VolumeRecord, backend: Backend): Promise<void> {
  return outsideCall(() => releaseFromNode(r, backend));
}

/** After the volume's storage grew: what must follow on the node before the mounted filesystem sees it. */
export async function refreshAfterGrow(r: VolumeRecord, backend: Backend): Promise<void> {
  if (backend.kind === 'block') await backend.refreshDevice(r);
}

/**
 * Grows the mounted filesystem at `volumePath` to the volume's size. A directory volume's
 * limit took effect when its storage grew: nothing is left to do on the node.
 */
export async function growMounted(r: VolumeRecord, backend: Backend, volumePath: string): Promise<boolean> {
  if (backend.kind === 'directory') return false;
  await backend.refreshDevice(r);
  if (r.accessType !== 'mount') return false;
  const m = await findMount(volumePath);
  if (!m) throw failedPrecondition(`volume ${r.id} is not mounted at ${volumePath}`);
  const fsType = r.fsType || DEFAULT_FS_TYPE;
  if (!isFormattable(fsType)) throw internal(`volume ${r.id} records filesystem ${fsType}, which Lode never makes on a block volume`);
  try {
    await growFilesystem(m.source, volumePath, fsType);
  } catch (err) {
    if (err instanceof OnlineGrowRefused) throw failedPrecondition(`${err.message}; it will grow offline the next time the volume is staged`);
    throw err;
  }
  if (r.filesystemBytes === r.capacityBytes) return false;
  r.filesystemBytes = r.capacityBytes;
  return true;
}

/** A mount volume's space and inodes, as NodeGetVolumeStats reports them, and a problem the filesystem itself reported. */
export interface MountedUsage {
  bytes: { total: number; available: number; used: number };
  inodes?: { total: number; available: number; used: number };
  problem?: string;
}

/**
 * What a mounted volume holds: its own filesystem's figures for a block volume, its enforced
 * limit for a directory volume (the pool's filesystem figures would be the whole disk's).
 */
export async function mountedUsage(r: VolumeRecord, backend: Backend, volumePath: string, m: MountEntry | undefined): Promise<MountedUsage> {
  if (backend.kind === 'directory') {
    const u = await backend.usage(r);
    const result: MountedUsage = { bytes: { total: u.totalBytes, available: u.availableBytes, used: u.usedBytes } };
    if (u.inodes) result.inodes = u.inodes;
    return result;
  }
  const s = await fs.statfs(volumePath);
  const result: MountedUsage = {
    bytes: { total: s.blocks * s.bsize, available: s.bavail * s.bsize, used: (s.blocks - s.bfree) * s.bsize },
    inodes: { total: s.files, available: s.ffree, used: s.files - s.ffree },
  };
  if (m && m.source.startsWith('/dev/')) {
    const errors = await filesystemErrorCount(m.source);
    if (errors > 0) result.problem = `the filesystem reported ${errors} error(s); check the kernel log and run fsck`;
  }
  return result;
}
