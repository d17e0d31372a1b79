// The loop-image backend: each volume is a preallocated image file in the pool directory, attached to a loop device.
import { accessSync, promises as fs, constants as fsConstants, statSync } from 'node:fs';
import * as path from 'node:path';
import type { BackendCapabilities, BlockBackend, Occupant, UnrecordedStorage } from '../../pool/backend.js';
import { recordsDir, reserveBytes, type PoolConfig } from '../../pool/pool.js';
import { MiB } from '../../pool/sizes.js';
import { directoryProblem } from '../../sys/directory-usable.js';
import { entryAt } from '../../sys/entry-at.js';
import { SpaceChanges } from '../space-changes.js';
import { StorageBytes } from '../storage-bytes.js';
import type { PoolStats } from '../../pool/pool-stats.js';
import type { VolumeRecord } from '../../pool/volume-record.js';
import { isPreallocated, preallocateFile, preallocateFiles, PreallocationUnsupported } from '../../sys/preallocate.js';
import { attachNewLoop, backedBy, backingFileOf, describeLoop, detachLoop, devicesBacking, listLoopDevices, loopSupported, refreshLoopCapacity, type LoopDevice } from '../../sys/loop.js';
import type { MountEntry } from '../../sys/mounts.js';
import { Batches } from '../../util/batches.js';
import { callSignal, outsideCall } from '../../util/call-signal.js';
import { log } from '../../util/log.js';
import type { SnapshotRecord } from '../../pool/snapshot-record.js';
import { exclusiveBytes, LoopSnapshots, refuseNonImage, type LoopImages } from './loop-snapshots.js';

export const IMAGE_SUFFIX = '.img';

/** One image to preallocate, with the signal of the call it is for. */
interface Preallocation {
  image: string;
  bytes: number;
  signal: AbortSignal | undefined;
}

/** How a preallocation was answered: done alone (its own errors thrown), or in a shared run that each image's own check must confirm. */
type PreallocationAnswer = 'done' | 'check';

const NO_LOOP = 'this kernel has no loop device support (/dev/loop-control is missing; try "modprobe loop")';

/**
 * The folder that holds the images: the records' folder, as in every released version (the
 * core finds its records by their suffix, this backend its images by theirs).
 */
export function imagesDir(config: Pick<PoolConfig, 'dir'>): string {
  return recordsDir(config);
}

export class LoopBackend implements BlockBackend, LoopImages {
  readonly kind = 'block';
  /** Images hold any filesystem the node makes, or none (raw block); they grow while in use. */
  readonly capabilities: BackendCapabilities = { rawBlock: true, needsFormat: true, onlineGrowth: true };
  private readonly dir: string;
  /** For pools without a configured size: bytes in images + free beyond the reserve, at the last refresh. */
  private fsCapacityBytes = 0;
  /**
   * Bytes each image holds on the filesystem, as far as this pool has preallocated them. Free
   * space counts everything else, so capacity = these + free, whatever the catalog has
   * reserved but not yet allocated (or freed but not yet forgotten).
   */
  readonly imageBytes = new StorageBytes();
  /** fallocate and rm in flight, which a refresh must not read across. */
  readonly spaceChanges = new SpaceChanges();
  /** Snapshots, restores and clones: copies of images. */
  readonly snapshots: LoopSnapshots = new LoopSnapshots(this);
  private sparseWarned = false;
  /**
   * Preallocations of concurrent creates, restores and growths are made together. Through the
   * tool helper each is one system call of its own (sys/preallocate); where tools start directly
   * they share one tool start: a burst of creates on one pool used to fork the driver once per
   * image (about three quarters of the driver's time at 16 concurrent creates, in a CPU
   * profile), and each fork holds every other call of the driver for its duration.
   */
  private readonly preallocations = new Batches<Preallocation, PreallocationAnswer>((batch) => this.preallocateBatch(batch));
  /** Set once the kernel ran a device of this pool buffered although direct I/O was asked. */
  private directIoRefused = false;
  /**
   * The loop devices of each image as this process knows them ([] = none). Filled from one
   * kernel scan at open and kept up to date by attach and detach, so no call scans all loop
   * devices (with a hundred of them that scan costs more than the mount it precedes). The
   * driver is the only one attaching its pool's images; a hint that no longer matches the
   * kernel is dropped and the kernel asked again.
   */
  private readonly known = new Map<string, string[]>();

  constructor(readonly config: PoolConfig) {
    this.dir = imagesDir(config);
  }

  imagePath(record: Pick<VolumeRecord, 'id'>): string {
    return path.join(this.dir, record.id + IMAGE_SUFFIX);
  }

  async open(records: VolumeRecord[], snapshots: SnapshotRecord[] = []): Promise<UnrecordedStorage[]> {
    // The backend's own prerequisite, so the driver and the CLI need not know of loop devices.
    if (!(await loopSupported())) throw new Error(`pool ${this.config.name}: ${NO_LOOP}`);
    await fs.mkdir(this.dir, { recursive: true, mode: 0o700 });
    // An image whose id is not among `records` is never removed here: a create records its
    // volume before making the image and a delete removes the record last, so no step of
    // Lode's leaves one; whatever did (an unusable record, a hand-made or foreign file) holds
    // data Lode cannot account for. The catalog decides how to report it.
    const recorded = new Set(records.map((r) => r.id));
    // Scanned only for a recorded image: the scan reads every loop device the kernel ever made
    // (a node that ran many volumes keeps hundreds), which a fresh pool has no use for.
    let devices: LoopDevice[] | undefined;
    this.known.clear();
    this.imageBytes.clear();
    const sizes = new Map(records.map((r) => [this.imagePath(r), exclusiveBytes(r)]));
    const unrecorded: UnrecordedStorage[] = [];
    for (const name of await fs.readdir(this.dir)) {
      if (!name.endsWith(IMAGE_SUFFIX)) continue;
      const id = name.slice(0, -IMAGE_SUFFIX.length);
      const image = path.join(this.dir, name);
      if (recorded.has(id)) {
        devices ??= await listLoopDevices();
        this.known.set(image, (await devicesBacking(devices, image)).map((d) => d.device));
        this.imageBytes.set(image, sizes.get(image) ?? 0);
        continue;
      }
      unrecorded.push(await this.unrecordedImage(id, image));
    }
    unrecorded.push(...(await this.snapshots.open(snapshots)));
    await this.refresh();
    return unrecorded;
  }

  /** An image (or whatever has its name) with no record: its size, counted as the pool's own images are. */
  private async unrecordedImage(id: string, image: string): Promise<UnrecordedStorage> {
    const st = await fs.stat(image).catch(() => undefined);
    const bytes = st?.isFile() ? st.size : 0;
    // Its blocks are missing from the free space like every other image's, and the ledger counts it.
    this.imageBytes.set(image, bytes);
    return { id, location: image, bytes };
  }

  /** Anything of the image's name is what open would report as an image with no record. */
  async occupant(record: VolumeRecord): Promise<Occupant | undefined> {
    const image = this.imagePath(record);
    if ((await entryAt(image)) === undefined) return undefined;
    return { kind: 'unrecorded', storage: await this.unrecordedImage(record.id, image) };
  }

  noteImage(image: string): void {
    if (!this.known.has(image)) this.known.set(image, []);
  }

  /** Nothing to choose ahead: an image's name follows from the volume's id. */
  assign(): void {}

  stats(allocatedBytes: number, volumes: number, quarantinedVolumes: number): PoolStats {
    const capacityBytes = this.config.sizeBytes ?? this.fsCapacityBytes;
    return {
      name: this.config.name,
      backend: 'loop',
      capacityBytes,
      allocatedBytes,
      availableBytes: Math.max(0, capacityBytes - allocatedBytes),
      volumes,
      quarantinedVolumes,
      dataPath: !this.config.directIo ? 'buffered' : this.directIoRefused ? 'buffered-fallback' : 'direct-io',
    };
  }

  async refresh(): Promise<void> {
    if (this.config.sizeBytes !== undefined) return;
    const mark = this.spaceChanges.mark();
    if (mark === undefined) return;
    const s = await fs.statfs(this.dir);
    if (!this.spaceChanges.quietSince(mark)) return;
    // Images are preallocated, so their blocks are already missing from bavail.
    const free = s.bavail * s.bsize;
    this.fsCapacityBytes = this.imageBytes.total + Math.max(0, free - reserveBytes(this.config, s.blocks * s.bsize));
  }

  allocate(record: VolumeRecord): Promise<void> {
    return this.spaceChanges.run(async () => {
      const image = this.imagePath(record);
      // A link is refused as well (O_NOFOLLOW), never written through.
      await refuseNonImage(image);
      const handle = await fs.open(image, fsConstants.O_CREAT | fsConstants.O_WRONLY | fsConstants.O_NOFOLLOW, 0o600);
      await handle.close();
      if (!this.known.has(image)) this.known.set(image, []);
      await this.preallocate(image, record.capacityBytes);
      this.imageBytes.set(image, record.capacityBytes);
    });
  }

  grow(record: VolumeRecord): Promise<void> {
    return this.spaceChanges.run(async () => {
      await this.preallocate(this.imagePath(record), record.capacityBytes);
      this.imageBytes.set(this.imagePath(record), exclusiveBytes(record));
    });
  }

  /**
   * Reserves every block up front so a full pool shows at create time (ENOSPC ->
   * RESOURCE_EXHAUSTED) and never later as I/O errors inside a pod. Filesystems without
   * fallocate get a sparse file, with a warning. Concurrent callers share one run
   * (preallocations); an image the shared run left short is preallocated again alone, which
   * throws its own error.
   */
  async preallocate(image: string, bytes: number): Promise<void> {
    if (this.sparseWarned) return this.preallocateAlone(image, bytes);
    const answer = await this.preallocations.add({ image, bytes, signal: callSignal() });
    if (answer === 'check' && !(await isPreallocated(image, bytes))) await this.preallocateAlone(image, bytes);
  }

  /**
   * One caller alone preallocates itself, with its own call's deadline; several run together
   * (through one shell where tools start directly), which no single caller's cancellation stops
   * (the others still need it). Each waits for the run that took its image either way, so
   * nothing works on an image after its call has returned.
   */
  private async preallocateBatch(batch: Preallocation[]): Promise<PreallocationAnswer[]> {
    const [only] = batch;
    if (batch.length === 1 && only !== undefined) {
      // Its own call's signal, or none outside a call: the run may have been started from another call's context.
      if (only.signal === undefined) await outsideCall(() => this.preallocateAlone(only.image, only.bytes));
      else await this.preallocateAlone(only.image, only.bytes, only.signal);
      return ['done'];
    }
    const done = await outsideCall(() => preallocateFiles(batch.map((p) => ({ file: p.image, bytes: p.bytes })))).catch((err: unknown) => {
      log('debug', 'a shared preallocation failed; each image is checked and preallocated alone', { error: (err as Error).message });
      return [];
    });
    // An image the helper answered for is done; any other is checked, and made alone if short.
    return batch.map((_, i) => (done[i] === true ? 'done' : 'check'));
  }

  private async preallocateAlone(image: string, bytes: number, signal?: AbortSignal): Promise<void> {
    try {
      await preallocateFile(image, bytes, signal === undefined ? {} : { signal });
    } catch (err) {
      if (err instanceof PreallocationUnsupported) {
        if (!this.sparseWarned) {
          log('warn', 'filesystem cannot preallocate; images are sparse and space is not guaranteed', { pool: this.config.name });
          this.sparseWarned = true;
        }
        const st = await fs.stat(image);
        if (st.size < bytes) await fs.truncate(image, bytes);
        return;
      }
      throw err;
    }
  }

  release(record: VolumeRecord): Promise<void> {
    return this.spaceChanges.run(async () => {
      await this.detach(record);
      await fs.rm(this.imagePath(record), { force: true });
      this.known.delete(this.imagePath(record));
      this.imageBytes.set(this.imagePath(record), 0);
    });
  }

  /** The image's loop devices: from what this process knows, checked against sysfs, else a kernel scan. */
  private async devicesOf(image: string): Promise<LoopDevice[]> {
    const hint = this.known.get(image);
    if (hint !== undefined) {
      const checked: LoopDevice[] = [];
      for (const device of hint) {
        const now = await describeLoop(device);
        if (now === undefined || !(await backedBy(now, image))) break;
        checked.push(now);
      }
      if (checked.length === hint.length) return checked;
    }
    const found = await devicesBacking(await listLoopDevices(), image);
    this.known.set(image, found.map((d) => d.device));
    return found;
  }

  async attach(record: VolumeRecord, readOnly = false): Promise<string> {
    const image = this.imagePath(record);
    accessSync(image); // the pool's own local disk: metadata calls are quick and never hang
    const devices = await this.devicesOf(image);
    // A writable attach reuses the writable device, so retries after a crash never stack devices.
    const existing = devices.find((d) => d.readOnly === readOnly);
    if (existing && !readOnly) return existing.device;
    const { device, directIo } = await attachNewLoop(image, readOnly, this.config.directIo);
    if (this.config.directIo && !directIo && !this.directIoRefused) {
      this.directIoRefused = true;
      log('warn', 'the pool\'s filesystem refused direct I/O; its loop devices run buffered (slower, and cached twice)', { pool: this.config.name, device });
    }
    this.known.set(image, [...devices.map((d) => d.device), device]);
    return device;
  }

  async detach(record: VolumeRecord): Promise<void> {
    const image = this.imagePath(record);
    for (const d of await this.devicesOf(image)) await detachLoop(d.device);
    this.known.set(image, []);
  }

  async detachDevice(device: string): Promise<void> {
    await detachLoop(device);
    for (const [image, devices] of this.known) {
      if (devices.includes(device)) this.known.set(image, devices.filter((d) => d !== device));
    }
  }

  async device(record: VolumeRecord): Promise<string | undefined> {
    return (await this.devicesOf(this.imagePath(record))).find((d) => !d.readOnly)?.device;
  }

  async refreshDevice(record: VolumeRecord): Promise<void> {
    for (const d of await this.devicesOf(this.imagePath(record))) await refreshLoopCapacity(d.device);
  }

  async problem(record: VolumeRecord): Promise<string | undefined> {
    const image = this.imagePath(record);
    try {
      const st = statSync(image);
      if (st.size < record.capacityBytes) return `backing image ${image} is ${st.size} bytes, expected ${record.capacityBytes}`;
    } catch {
      return `backing image ${image} is missing`;
    }
    return undefined;
  }

  async holdsMount(mount: MountEntry): Promise<boolean> {
    if (!/^\/dev\/loop\d+$/.test(mount.source)) return false;
    const backing = await backingFileOf(mount.source);
    if (backing === undefined) return false;
    if (path.dirname(backing) === this.dir) return true;
    // Attached by a driver in a mount namespace gone since: the kernel names only the file's path inside its mount.
    return backedBy({ device: mount.source, backingFile: backing, readOnly: false }, path.join(this.dir, path.basename(backing)));
  }

  /** Sizes are chosen in whole MiB (see chooseSize); nothing of the backend asks for more. */
  allocationUnit(): number {
    return MiB;
  }

  /** Nothing short of a problem makes one of these volumes abnormal. */
  async warning(): Promise<string | undefined> {
    return undefined;
  }

  /** Loop devices and the images' directory, checked on every call (directoryProblem: no trip through the thread pool). */
  async healthProblem(): Promise<string | undefined> {
    if (!(await loopSupported())) return `pool ${this.config.name}: ${NO_LOOP}`;
    const problem = directoryProblem(this.dir);
    return problem === undefined ? undefined : `pool ${this.config.name}: ${problem}`;
  }
}
