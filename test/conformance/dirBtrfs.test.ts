// Backend conformance of dir pools on btrfs (a subvolume with a qgroup limit per volume); skips while the driver has no dir backend.
import { backendRefusal } from './backend-refusal.js';
import { dirBtrfsFixture } from './fixtures.js';
import { runConformance } from './suite.js';

runConformance({
  ...dirBtrfsFixture,
  unavailable: async () => (await dirBtrfsFixture.unavailable()) ?? (await backendRefusal('dir')),
});
