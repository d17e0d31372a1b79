// The conformance fixtures of lvm pools, thick and thin, for the guest files that run the suite in the VM: a volume group on a loop device of the guest.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { run } from '../../src/sys/exec.js';
import { poolTag } from '../../src/backends/lvm/lvm-backend.js';
import { LVM_CONFIG } from '../../src/sys/lvm.js';
import { POOL } from '../conformance/checks.js';
import type { BackendFixture, FixtureCapabilities, PlantedObject, PoolMedium } from '../conformance/fixture.js';
import { fileHash, MiB, writeRandomFile } from '../driver/support.js';
import { missingPrerequisite } from '../conformance/fixtures.js';
import { guestOnly } from './support.js';

export const THIN_POOL = 'tpool';

/** An LVM command as the driver runs it (the same configuration), for the medium and the checks. */
export function lvmTool(command: string, args: readonly string[]): Promise<{ stdout: string }> {
  return run(command, ['--config', LVM_CONFIG, ...args]);
}

/** Every logical volume of `vg` by name, with its size in bytes (virtual for thin volumes). */
export async function lvSizes(vg: string): Promise<Map<string, number>> {
  const { stdout } = await lvmTool('lvs', ['--reportformat', 'json', '--units', 'b', '--nosuffix', '-o', 'lv_name,lv_size', vg]);
  const report = JSON.parse(stdout) as { report: Array<{ lv: Array<{ lv_name: string; lv_size: string }> }> };
  return new Map((report.report[0]?.lv ?? []).map((r) => [r.lv_name, Number(r.lv_size)]));
}

export interface LvmMediumOptions {
  /** Size of the guest's sparse image holding the one physical volume. */
  imageMiB: number;
  /** A thin pool of this size in the VG, and the pool's volumes thin in it; undefined = thick volumes. */
  thinPoolMiB?: number;
  /** Further pool options, e.g. "overprovision=2". */
  extra?: string;
}

export interface LvmMedium extends PoolMedium {
  vg: string;
  device: string;
}

/**
 * A fresh volume group of its own on a loop device over a sparse image on the guest's tmpfs,
 * with a thin pool when asked, and a state directory for the pool's records; all of it
 * removed by the medium's cleanup (vgremove -f takes whatever a failed case left).
 */
export async function lvmMedium(o: LvmMediumOptions): Promise<LvmMedium> {
  const undo: Array<() => Promise<unknown>> = [];
  const cleanup = async (): Promise<void> => {
    for (const step of undo.reverse()) await step();
    undo.length = 0;
  };
  try {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lode-medium-lvm-'));
    undo.push(() => fs.rm(dir, { recursive: true, force: true }));
    const image = path.join(dir, 'pv.img');
    await fs.writeFile(image, '');
    await fs.truncate(image, o.imageMiB * 2 ** 20);
    const device = (await run('losetup', ['--find', '--show', image])).stdout.trim();
    undo.push(() => run('losetup', ['-d', device]));
    const vg = `lodeconf${randomBytes(3).toString('hex')}`;
    await lvmTool('pvcreate', ['-q', device]);
    undo.push(() => lvmTool('pvremove', ['-q', '-ff', '-y', device]));
    await lvmTool('vgcreate', ['-q', vg, device]);
    undo.push(() => lvmTool('vgremove', ['-q', '-f', vg]));
    if (o.thinPoolMiB !== undefined) await lvmTool('lvcreate', ['-q', '-y', '--type', 'thin-pool', '-L', `${o.thinPoolMiB}m`, '-n', THIN_POOL, vg]);
    const state = path.join(dir, 'state');
    const extra = ['backend=lvm', `vg=${vg}`, ...(o.thinPoolMiB !== undefined ? [`thin-pool=${THIN_POOL}`] : []), ...(o.extra ? [o.extra] : [])].join(',');
    return { vg, device, pool: { dir: state, extra }, cleanup, storage: () => lvSizes(vg) };
  } catch (err) {
    await cleanup();
    throw err;
  }
}

async function lvmUnavailable(): Promise<string | undefined> {
  if (guestOnly) return guestOnly;
  const missing = await missingPrerequisite(['losetup', 'pvcreate', 'vgcreate', 'lvcreate', 'thin_check', 'mkfs.ext4', 'mkfs.xfs']);
  if (missing !== undefined) return missing;
  for (const mod of ['dm_mod', 'dm_thin_pool', 'dm_snapshot']) {
    if (!(await run('modprobe', [mod]).then(() => true, () => false))) return `the kernel has no ${mod} module`;
  }
  return undefined;
}

/**
 * A logical volume of the name Lode gives the storage of `id`, holding 8 MiB of random bytes:
 * with the pool's tag it is what start-up quarantines without a record; without it, another
 * tool's, which no Lode pool counts.
 */
async function plantedLv(vg: string, id: string, tagged: boolean): Promise<PlantedObject> {
  const name = `lode-${id}`;
  await lvmTool('lvcreate', ['-q', '-y', '-n', name, '-L', '8m', ...(tagged ? ['--addtag', poolTag(POOL)] : []), '--activate', 'y', vg]);
  const device = `/dev/${vg}/${name}`;
  const hash = await writeRandomFile(device, 8 * MiB);
  return {
    async assertIntact() {
      assert.equal((await lvSizes(vg)).get(name), 8 * MiB, `${vg}/${name} is still there, at its size`);
      assert.equal(await fileHash(device), hash, `${vg}/${name} keeps every byte it was planted with`);
    },
    remove: async () => { await lvmTool('lvremove', ['-q', '-y', `${vg}/${name}`]); },
  };
}

function lvmFixture(name: string, o: LvmMediumOptions, snapshots: FixtureCapabilities['snapshots']): BackendFixture {
  // One medium at a time (the suite runs its cases one after another): damage needs its VG.
  let current: LvmMedium | undefined;
  const vgNow = (): string => {
    if (current === undefined) throw new Error('no medium is set up');
    return current.vg;
  };
  return {
    name,
    async setup() {
      current = await lvmMedium(o);
      return current;
    },
    capabilities: { rawBlock: true, fsTypes: ['ext4', 'xfs'], onlineGrowth: false, writers: 'bounded', snapshots },
    /**
     * What an operator's slip does to a logical volume: an unused one is removed, one in use
     * (LVM refuses to remove it) renamed away, which the returned step removes once unmounted.
     */
    async damage(_poolDir, volumeId) {
      const vg = current?.vg;
      if (vg === undefined) throw new Error('no medium is set up');
      const lv = `${vg}/lode-${volumeId}`;
      if (await lvmTool('lvremove', ['-q', '-y', lv]).then(() => true, () => false)) return undefined;
      const renamed = `damaged-${volumeId.slice(-8)}`;
      await lvmTool('lvrename', ['-q', lv, renamed]);
      return async () => { await lvmTool('lvremove', ['-q', '-y', `${vg}/${renamed}`]); };
    },
    foreignObjects: [
      { what: 'a logical volume of the Lode name with the pool\'s tag', quarantined: true, plant: (_dir, _kind, id) => plantedLv(vgNow(), id, true) },
      { what: 'a logical volume of the Lode name without the pool\'s tag', quarantined: false, plant: (_dir, _kind, id) => plantedLv(vgNow(), id, false) },
    ],
    unavailable: lvmUnavailable,
    failpointsNotReached: [],
  };
}

/**
 * Device-mapper makes a snapshot of either kind with its origin suspended, no freeze of the
 * driver's around it (which would make LVM's own fail): the freeze points are never passed.
 */
const NO_FREEZE = ['snapshot:frozen', 'clone:frozen'];

/**
 * Linear volumes in a VG of 1.5 GiB: room for the xfs growth case (300 MiB to 600 MiB) and a
 * neighbour; classic snapshots with an area of half their origin, which depend on it.
 */
export const lvmThickFixture = lvmFixture('lvm-thick', { imageMiB: 1536, extra: 'snapshot-size=50%' }, { independent: false, notReached: NO_FREEZE });

/**
 * Thin volumes in a 1 GiB thin pool of a 1.5 GiB VG (its metadata and spare take some of the
 * rest). Not overprovisioned: the suite checks that a volume takes exactly its size from what
 * is available, which holds for thin volumes only while the budget, not the data, is the
 * smaller figure; lvm-capacity.test.ts checks the overprovisioned rule against lvs.
 */
export const lvmThinFixture = lvmFixture('lvm-thin', { imageMiB: 1536, thinPoolMiB: 1024 }, { independent: true, notReached: NO_FREEZE });
