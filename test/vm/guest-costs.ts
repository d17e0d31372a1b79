// Expected guest seconds per VM test file, only to share the files evenly among VMs booted side by side.
import * as path from 'node:path';
import { sanityBackendTaken } from '../vm-guest/sanity-slice.js';

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
  // The NodeExpandVolume specs on the one backend a run takes: 32-58 s in the runs of 2026-12-06 (the mean).
  'csi-sanity-node-expansion': 48,
  'dir-backend-ext4': 66,
  'dir-backend-xfs': 35,
  'ext4-project-quota': 15,
  'lvm-capacity': 137,
  'lvm-snapshot-overflow': 60,
  'xfs-project-quota': 10,
};

/** A file not measured yet counts as a middling one. */
const UNMEASURED_SECONDS = 120;

/**
 * csi-sanity's files in the VM: one backend of four per run (test/vm-guest/sanity-slice.ts), so a
 * file costs its figure only in the runs whose seed takes its backend, and otherwise skips at once.
 * Guest seconds in the LODE_CRASH_POINTS=all run of 2026-12-06 (one VM, this 2-core machine, busy
 * with other jobs: both halves of an lvm pool together took one half to two thirds of these in a
 * run on a quieter machine the same day).
 */
const SANITY_SECONDS: Readonly<Record<string, number>> = {
  'csi-sanity-dir-xfs-controller-snapshots': 67,
  'csi-sanity-dir-xfs-node': 45,
  'csi-sanity-dir-ext4-controller-snapshots': 50,
  'csi-sanity-dir-ext4-node': 38,
  'csi-sanity-lvm-thick-controller-snapshots': 153,
  'csi-sanity-lvm-thick-node': 120,
  'csi-sanity-lvm-thin-controller-snapshots': 219,
  'csi-sanity-lvm-thin-node': 141,
};
/** What one of them costs when it skips: node's start in the guest (measured 2026-12-06). */
const SANITY_SKIPPED_SECONDS = 3;
const SANITY_FILE = /^csi-sanity-(dir-xfs|dir-ext4|lvm-thick|lvm-thin)-/;

export function guestCost(file: string): number {
  const name = path.basename(file).replace(/\.test\.(js|ts)$/, '');
  const sanity = SANITY_SECONDS[name];
  if (sanity !== undefined) return sanityBackendTaken(SANITY_FILE.exec(name)?.[1] ?? '') ? sanity : SANITY_SKIPPED_SECONDS;
  return GUEST_SECONDS[name] ?? UNMEASURED_SECONDS;
}
