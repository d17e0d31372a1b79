// The official CSI conformance suite (csi-sanity, from ../shared/tools/csi) against real drivers on the host's backends: loop pools (ext4, xfs, raw block; expansion by the controller and by the node alone) and dir pools on btrfs, each with 0 failures.
import { dirBtrfsFixture } from '../conformance/fixtures.js';
import { MiB } from '../driver/support.js';
import { fixturePools, sanityTest, type SanityRun } from './sanity-runner.js';

const RUNS: SanityRun[] = [
  { name: 'loop, ext4, controller and node expansion', growsMountedExt4: true, pools: async () => [{ name: 'fast', size: '2Gi' }], parameters: { pool: 'fast' }, bytes: 32 * MiB, controllerExpansion: true },
  { name: 'loop, ext4, node expansion only', growsMountedExt4: true, pools: async () => [{ name: 'fast', size: '2Gi' }], parameters: { pool: 'fast' }, bytes: 32 * MiB, controllerExpansion: false },
  // mkfs.xfs wants 300 MiB at least; the images are sparse until written.
  { name: 'loop, xfs', growsMountedExt4: false, pools: async () => [{ name: 'fast', size: '8Gi' }], parameters: { pool: 'fast', fsType: 'xfs' }, bytes: 320 * MiB, controllerExpansion: true },
  { name: 'loop, raw block', growsMountedExt4: false, pools: async () => [{ name: 'fast', size: '2Gi' }], parameters: { pool: 'fast' }, bytes: 32 * MiB, block: true, controllerExpansion: true },
  {
    name: 'dir on btrfs',
    growsMountedExt4: false,
    unavailable: () => dirBtrfsFixture.unavailable(),
    pools: (t) => fixturePools(t, dirBtrfsFixture, 'shared'),
    parameters: { pool: 'shared' }, bytes: 32 * MiB, controllerExpansion: true,
  },
];

for (const r of RUNS) sanityTest(r);
