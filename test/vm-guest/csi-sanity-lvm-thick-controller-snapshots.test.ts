// The official CSI conformance suite (csi-sanity) in the VM on lvm pools of thick (linear) volumes with classic snapshots, its Controller Service and snapshot specs, in the runs whose seed takes this backend of the four (test/vm-guest/sanity-slice.ts).
import { sanityOnVmBackend } from './sanity-slice.js';

await sanityOnVmBackend('lvm-thick', 'controller-snapshots');
