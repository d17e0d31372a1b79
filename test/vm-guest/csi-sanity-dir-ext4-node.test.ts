// The official CSI conformance suite (csi-sanity) in the VM on dir pools on ext4 project quotas, all specs but the Controller Service and snapshot ones (Node Service, ControllerExpandVolume, Identity), in the runs whose seed takes this backend of the four (test/vm-guest/sanity-slice.ts).
import { sanityOnVmBackend } from './sanity-slice.js';

await sanityOnVmBackend('dir-ext4', 'node');
