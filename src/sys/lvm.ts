// LVM through its command-line tools: JSON reports in bytes, and one configuration that works with no udev (in a container).
import { readdirSync, readFileSync } from 'node:fs';
import { ExecError, run } from './exec.js';

/**
 * Given to every command. No udev sync and no udev rules: in a container (and in a VM without
 * udevd) nobody would answer, and LVM makes the device nodes itself; devices are found by
 * scanning /dev, not from a udev database the container may not have. No metadata backups: they
 * would be written into the container's own /etc, not the host's (docs/backends.md says how
 * to keep them on the host).
 */
export const LVM_CONFIG = 'activation{udev_sync=0 udev_rules=0} devices{obtain_device_list_from_udev=0} backup{backup=0 archive=0}';

/** LVM tools wait for the VG lock; a command still running after this is stuck, not busy. */
const TIMEOUT_MS = 120_000;

export interface VgReport {
  name: string;
  sizeBytes: number;
  freeBytes: number;
  extentBytes: number;
}

export interface LvReport {
  name: string;
  /** The virtual size for a thin volume, the size of its data for a thin pool. */
  sizeBytes: number;
  tags: string[];
  /** The lv_attr string: [0] the type ('-' linear, 't' thin pool, 'V' thin volume, 's' classic snapshot, 'o' origin of classic snapshots), [4] 'a' when active, 'I' or 'S' for a classic snapshot made invalid by an overflow, [8] 'p' when a PV is missing. */
  attr: string;
  /** The thin pool of a thin volume; '' otherwise. */
  pool: string;
  /** How full a thin pool's data and metadata are, in percent (two decimals, as lvs reports them); undefined for other volumes. */
  dataPercent?: number;
  metadataPercent?: number;
  /** The device-mapper uuid of the active LV ("LVM-" + VG uuid + LV uuid): unchanged when the LV is renamed. */
  dmUuid: string;
}

function lvm(command: string, args: readonly string[]): Promise<{ stdout: string }> {
  return run(command, ['--config', LVM_CONFIG, ...args], { timeoutMs: TIMEOUT_MS });
}

const REPORT = ['--reportformat', 'json', '--units', 'b', '--nosuffix'];

/** Whether an LVM command failed because what it was asked about does not exist. */
function isNotFound(err: unknown): boolean {
  return err instanceof ExecError && err.spawnCode === undefined && /not found|Failed to find/i.test(err.stderr);
}

/** The rows of the one report of `section` ("vg" or "lv") in an LVM JSON report. */
function rows(stdout: string, section: string): Array<Record<string, unknown>> {
  const parsed: unknown = JSON.parse(stdout);
  const reports = (parsed as { report?: unknown }).report;
  if (!Array.isArray(reports)) throw new Error(`LVM report has no "report" list: ${stdout.slice(0, 200)}`);
  const out: Array<Record<string, unknown>> = [];
  for (const r of reports as unknown[]) {
    const list = (r as Record<string, unknown>)[section];
    if (Array.isArray(list)) for (const row of list as unknown[]) out.push(row as Record<string, unknown>);
  }
  return out;
}

function text(row: Record<string, unknown>, field: string): string {
  const v = row[field];
  if (typeof v !== 'string') throw new Error(`LVM report row lacks ${field}`);
  return v;
}

function bytes(row: Record<string, unknown>, field: string): number {
  const v = Number(text(row, field));
  if (!Number.isSafeInteger(v) || v < 0) throw new Error(`LVM report field ${field} is not a byte count: ${String(row[field])}`);
  return v;
}

function percent(row: Record<string, unknown>, field: string): number | undefined {
  const v = text(row, field);
  return v === '' ? undefined : Number(v);
}

/** The volume group's figures, or undefined when there is no such VG. */
export async function readVg(vg: string): Promise<VgReport | undefined> {
  let stdout: string;
  try {
    ({ stdout } = await lvm('vgs', [...REPORT, '-o', 'vg_name,vg_size,vg_free,vg_extent_size', vg]));
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
  const row = rows(stdout, 'vg')[0];
  if (!row) return undefined;
  return { name: text(row, 'vg_name'), sizeBytes: bytes(row, 'vg_size'), freeBytes: bytes(row, 'vg_free'), extentBytes: bytes(row, 'vg_extent_size') };
}

const LV_FIELDS = 'lv_name,lv_size,lv_tags,lv_attr,pool_lv,data_percent,metadata_percent,lv_uuid,vg_uuid';

function toLv(row: Record<string, unknown>): LvReport {
  const tags = text(row, 'lv_tags');
  const lv: LvReport = {
    name: text(row, 'lv_name'),
    sizeBytes: bytes(row, 'lv_size'),
    tags: tags === '' ? [] : tags.split(','),
    attr: text(row, 'lv_attr'),
    pool: text(row, 'pool_lv'),
    dmUuid: `LVM-${text(row, 'vg_uuid').replace(/-/g, '')}${text(row, 'lv_uuid').replace(/-/g, '')}`,
  };
  const data = percent(row, 'data_percent');
  const meta = percent(row, 'metadata_percent');
  if (data !== undefined) lv.dataPercent = data;
  if (meta !== undefined) lv.metadataPercent = meta;
  return lv;
}

/** Every visible logical volume of `vg` (none when the VG is missing). */
export async function readLvs(vg: string): Promise<LvReport[]> {
  try {
    const { stdout } = await lvm('lvs', [...REPORT, '-o', LV_FIELDS, vg]);
    return rows(stdout, 'lv').map(toLv);
  } catch (err) {
    if (isNotFound(err)) return [];
    throw err;
  }
}

/** One logical volume, or undefined when `vg` has none of that name. */
export async function readLv(vg: string, name: string): Promise<LvReport | undefined> {
  try {
    const { stdout } = await lvm('lvs', [...REPORT, '-o', LV_FIELDS, `${vg}/${name}`]);
    return rows(stdout, 'lv').map(toLv)[0];
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

export interface NewLv {
  vg: string;
  name: string;
  bytes: number;
  tags: readonly string[];
  /** Makes a thin volume of this thin pool (virtual size `bytes`) instead of a linear one. */
  thinPool?: string;
}

/** Raised when the VG or thin pool has no room for the volume, whatever the figures said a moment ago. */
export class LvmNoSpaceError extends Error {}

/** An LVM command that allocates, with LVM's own "no room" answer turned into LvmNoSpaceError. */
async function allocating(command: string, args: readonly string[]): Promise<void> {
  try {
    await lvm(command, args);
  } catch (err) {
    if (err instanceof ExecError && /insufficient free space|not enough free|no space/i.test(err.stderr)) throw new LvmNoSpaceError(err.message);
    throw err;
  }
}

/** Creates and activates a logical volume; the tags are part of the same metadata commit. */
export async function createLv(lv: NewLv): Promise<void> {
  const size = lv.thinPool !== undefined ? ['-V', `${lv.bytes}b`, '--thinpool', lv.thinPool] : ['-L', `${lv.bytes}b`];
  const tags = lv.tags.flatMap((t) => ['--addtag', t]);
  await allocating('lvcreate', ['-q', '-y', '-n', lv.name, ...size, ...tags, '--activate', 'y', lv.vg]);
}

export interface NewSnapshotLv {
  vg: string;
  name: string;
  /** The LV it is a snapshot of. */
  origin: string;
  tags: readonly string[];
  /**
   * A classic (copy-on-write) snapshot with an area of this size; undefined = a thin
   * snapshot of a thin origin, which takes no space of its own until either side is written.
   */
  cowBytes?: number;
  /**
   * Thin only: the snapshot is a volume to use, active now and at every activation (LVM skips
   * thin snapshots by default, which would leave a restored volume without a device after a
   * reboot). False: it stays inactive and skipped, a copy kept only to be copied again.
   */
  usable?: boolean;
}

/**
 * Snapshots `origin` (device-mapper suspends it for the instant, flushing and freezing its
 * filesystem, so the copy is a point in time); the tags are part of the same metadata commit.
 */
export async function createSnapshotLv(lv: NewSnapshotLv): Promise<void> {
  const tags = lv.tags.flatMap((t) => ['--addtag', t]);
  const kind = lv.cowBytes !== undefined ? ['-L', `${lv.cowBytes}b`] : lv.usable === true ? ['--setactivationskip', 'n', '--activate', 'y'] : [];
  await allocating('lvcreate', ['-q', '-y', '-s', '-n', lv.name, ...kind, ...tags, `${lv.vg}/${lv.origin}`]);
}

/** Grows a logical volume (linear or thin) to `bytes`. */
export async function extendLv(vg: string, name: string, bytes: number): Promise<void> {
  await allocating('lvextend', ['-q', '-y', '-L', `${bytes}b`, `${vg}/${name}`]);
}

/** Removes a logical volume; it must not be open (mounted or held by a loop device). */
export async function removeLv(vg: string, name: string): Promise<void> {
  await lvm('lvremove', ['-q', '-y', `${vg}/${name}`]);
}

/** Activates a logical volume (after a reboot the host may not have); active already is fine. */
export async function activateLv(vg: string, name: string): Promise<void> {
  await lvm('lvchange', ['-q', '-ay', '-K', `${vg}/${name}`]);
}

/** The /dev/dm-N node of the active device-mapper device with uuid `uuid`, read from sysfs (no tool runs), or undefined. */
export function dmDeviceByUuid(uuid: string): string | undefined {
  let names: string[];
  try {
    names = readdirSync('/sys/block').filter((n) => /^dm-\d+$/.test(n));
  } catch {
    return undefined;
  }
  for (const name of names) {
    try {
      if (readFileSync(`/sys/block/${name}/dm/uuid`, 'utf8').trim() === uuid) return `/dev/${name}`;
    } catch {
      // gone between the listing and the read
    }
  }
  return undefined;
}

/** The device-mapper name of `vg`/`lv` as /dev/mapper and sysfs show it: each '-' doubled, joined by one. */
export function dmName(vg: string, lv: string): string {
  return `${vg.replace(/-/g, '--')}-${lv.replace(/-/g, '--')}`;
}

/** LVM's rule for VG and LV names (lvm(8), "VALID NAMES"), with Lode's own limit of 64 characters. */
export const LVM_NAME = /^[a-zA-Z0-9+_.][a-zA-Z0-9+_.-]{0,63}$/;
