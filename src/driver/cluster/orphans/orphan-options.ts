// When and how each node looks for orphaned volumes: its volumes that no PersistentVolume names.
export interface OrphanOptions {
  /** Time between two looks at the PersistentVolumes. */
  checkMs: number;
  /** How long a volume must stay named by no PV before it is reported (and, with `delete`, deleted). */
  graceMs: number;
  /** Delete reported orphans that nothing uses; off unless asked for. */
  delete: boolean;
}

export const DEFAULT_ORPHAN_CHECK_S = 300;

/**
 * One hour. A volume is without its PV, by design, between CreateVolume's answer and
 * csi-provisioner's write of the PV: milliseconds normally. When that write fails the
 * provisioner retries it (5 tries 10 s apart in its default store, then it deletes the
 * volume itself), and a provisioner that dies in between calls CreateVolume again after its
 * restart, which resets the clock here. An hour is far beyond the first two and gives a
 * crashed sidecar time to come back; a report is an alert, not a deletion.
 */
export const DEFAULT_ORPHAN_GRACE_S = 3_600;
