// The official CSI conformance suite (csi-sanity) in the VM on lvm pools of thin volumes, all specs but the Controller Service and snapshot ones (Node Service, ControllerExpandVolume, Identity), in the runs whose seed takes this backend of the four (test/vm-guest/sanity-slice.ts).
import { sanityOnVmBackend } from './sanity-slice.js';

await sanityOnVmBackend('lvm-thin', 'node');
