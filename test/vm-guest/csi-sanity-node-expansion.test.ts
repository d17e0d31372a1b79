// csi-sanity's NodeExpandVolume specs in the VM against a driver without --controller-expansion, so the node alone grows the volume, on the backend of the four this run's seed takes (test/vm-guest/sanity-slice.ts).
import { nodeExpansionOnVmBackends } from './sanity-slice.js';

await nodeExpansionOnVmBackends();
