// Snapshot benchmark: how long CreateSnapshot and a restore take for a loop volume in use, as a full copy (ext4 pool) and as a reflink (XFS pool).
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { DriverHarness, MiB, mountCap } from '../test/helpers/driver-harness.js';
import { mountedImage, type MountedImage } from '../test/conformance/image-medium.js';
import { GiB, median, timeMs } from './lifecycle.js';

const WRITTEN = 256 * MiB;

/** One pool's figures: a 1 GiB ext4 volume, published, with WRITTEN bytes of data; `runs` snapshots and restores of it. */
async function measure(label: string, poolDir: string | undefined, runs: number): Promise<void> {
  const h = await DriverHarness.start({ pools: [{ name: 'snap', size: '8Gi', ...(poolDir !== undefined ? { dir: poolDir } : {}) }] });
  try {
    const cap = mountCap();
    const src = (await h.client.createVolume({ name: 'bench-src', capacity_range: { required_bytes: GiB }, volume_capabilities: [cap] })).volume?.volume_id ?? '';
    const staging = h.stagingPath('src');
    const target = h.targetPath('src');
    await fs.mkdir(path.dirname(target), { recursive: true });
    await h.client.nodeStageVolume({ volume_id: src, staging_target_path: staging, volume_capability: cap });
    await h.client.nodePublishVolume({ volume_id: src, staging_target_path: staging, target_path: target, volume_capability: cap });
    const chunk = randomBytes(16 * MiB);
    const handle = await fs.open(path.join(target, 'data'), 'w');
    for (let off = 0; off < WRITTEN; off += chunk.length) await handle.write(chunk, 0, chunk.length, off);
    await handle.sync();
    await handle.close();
    const snaps: number[] = [];
    const restores: number[] = [];
    for (let i = 0; i < runs; i++) {
      let id = '';
      snaps.push(await timeMs(async () => {
        id = (await h.client.createSnapshot({ name: `bench-snap-${i}`, source_volume_id: src, parameters: {} })).snapshot?.snapshot_id ?? '';
      }));
      let restored = '';
      restores.push(await timeMs(async () => {
        restored = (await h.client.createVolume({
          name: `bench-restore-${i}`, capacity_range: { required_bytes: GiB }, volume_capabilities: [cap], volume_content_source: { snapshot: { snapshot_id: id } },
        })).volume?.volume_id ?? '';
      }));
      await h.client.deleteVolume({ volume_id: restored });
      await h.client.deleteSnapshot({ snapshot_id: id });
    }
    console.log(`  ${label.padEnd(34)} CreateSnapshot ${median(snaps).toFixed(0).padStart(6)} ms   restore ${median(restores).toFixed(0).padStart(6)} ms   (median of ${runs})`);
    await h.client.nodeUnpublishVolume({ volume_id: src, target_path: target });
    await h.client.nodeUnstageVolume({ volume_id: src, staging_target_path: staging });
    await h.client.deleteVolume({ volume_id: src });
  } finally {
    await h.cleanup();
  }
}

async function main(): Promise<void> {
  const runs = Number(process.env.LODE_BENCH_RUNS ?? '5');
  console.log(`(f) snapshots of a published 1 GiB ext4 loop volume holding ${WRITTEN / MiB} MiB`);
  await measure('pool on this machine\'s disk (copy)', undefined, runs);
  let xfs: MountedImage | undefined;
  try {
    xfs = await mountedImage('xfs', 10 * 1024, ['mkfs.xfs', '-q', '-f', '-m', 'reflink=1']);
    await measure('pool on XFS with reflink', xfs.mountPoint, runs);
  } finally {
    await xfs?.cleanup();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
