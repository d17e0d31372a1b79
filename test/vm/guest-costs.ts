// Expected guest seconds per VM test file, only to share the files evenly among VMs booted side by side.
import * as path from 'node:path';

/**
 * Guest seconds of each file in the full `CI=true npm test` of 2026-12-02 on the 2-core
 * development machine, two VMs side by side (its log is not kept in the repository). A figure
 * that drifts only makes the VMs finish less evenly; nothing is timed against it. The two
 * `-tenants` files: below.
 */
const GUEST_SECONDS: Readonly<Record<string, number>> = {
  'conformance-dir-ext4-recovery': 183,
  'conformance-dir-ext4': 216,
  'conformance-dir-xfs-recovery': 160,
  'conformance-dir-xfs-snapshots': 93,
  'conformance-dir-xfs': 209,
  // The full VM run of 2026-12-04 (two VMs side by side; ext4 and thin that day).
  'conformance-dir-tenants': 138,
  'conformance-lvm-tenants': 222,
  'conformance-lvm-thick-crash': 82,
  'conformance-lvm-thick-growth': 281,
  'conformance-lvm-thick-recovery': 225,
  'conformance-lvm-thick-snapshot-crash': 172,
  'conformance-lvm-thick-snapshots': 151,
  'conformance-lvm-thick': 250,
  'conformance-lvm-thin-growth': 190,
  'conformance-lvm-thin-recovery': 48,
  'conformance-lvm-thin-snapshots': 157,
  'conformance-lvm-thin': 101,
  'dir-backend-ext4': 66,
  'dir-backend-xfs': 35,
  'ext4-project-quota': 15,
  'lvm-capacity': 137,
  'lvm-snapshot-overflow': 60,
  'xfs-project-quota': 10,
};

/** A file not measured yet counts as a middling one. */
const UNMEASURED_SECONDS = 120;

export function guestCost(file: string): number {
  return GUEST_SECONDS[path.basename(file).replace(/\.test\.(js|ts)$/, '')] ?? UNMEASURED_SECONDS;
}
