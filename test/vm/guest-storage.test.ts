// Runs the guest storage tests (XFS and ext4 project quotas, the dir backend on both, LVM thick and thin) in one VM boot, since
// this host's kernel has neither device-mapper nor those quota formats.
import { vmTestFiles } from './host-suite.js';
import { defaultGuestFiles } from './run.js';

vmTestFiles(defaultGuestFiles());
