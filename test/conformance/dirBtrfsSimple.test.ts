// Backend conformance of dir pools on btrfs with simple quotas (squota), where each volume's tree is held by a qgroup of its own; skips, saying why, where the kernel or btrfs-progs lacks them.
import { backendRefusal } from './backend-refusal.js';
import { dirBtrfsSimpleFixture } from './fixtures.js';
import { runConformance } from './suite.js';

// The cases where the quota mode shows (how a volume is made, held, grown, counted, snapshotted
// and repaired); the crash points run in full mode (dirBtrfs.test.ts), through the same steps.
runConformance({
  ...dirBtrfsSimpleFixture,
  unavailable: async () => (await dirBtrfsSimpleFixture.unavailable()) ?? (await backendRefusal('dir')),
}, { cases: ['lifecycle', 'idempotency', 'size', 'capacity', 'growth', 'damage', 'restart', 'writers', 'snapshots'] });
