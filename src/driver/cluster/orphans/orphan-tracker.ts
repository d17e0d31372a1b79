// Which of this node's volumes no PV has named for the grace period: the clock starts at the first complete list that misses a volume.
import type { VolumeRecord } from '../../../pool/volume-record.js';

/** A volume the last complete list did not name. */
export interface Candidate {
  id: string;
  name: string;
  pool: string;
  bytes: number;
  /** Wall time from which it counts as unnamed: the first list that missed it, or a later CreateVolume answer. */
  unnamedSinceMs: number;
}

/** The volumes the orphan check looks at: ready, and not inline ephemeral (those never have a PV). */
export function checkable(records: readonly VolumeRecord[]): VolumeRecord[] {
  return records.filter((r) => r.state === 'ready' && !r.ephemeral);
}

export class OrphanTracker {
  private readonly candidates = new Map<string, Candidate>();

  constructor(private readonly graceMs: number) {}

  /**
   * Takes one complete list's answer. Volumes it names stop being candidates (a PV that
   * arrives late resets their clock for good); the others start, or keep, their clock. A
   * CreateVolume answer moves the clock to it: the provisioner is still at work on that
   * volume. Returns the candidates unnamed for at least the grace period.
   */
  observe(volumes: readonly VolumeRecord[], named: ReadonlySet<string>, nowMs: number, lastCreate: (id: string) => number | undefined): Candidate[] {
    const present = new Set<string>();
    for (const r of volumes) {
      present.add(r.id);
      if (named.has(r.id)) {
        this.candidates.delete(r.id);
        continue;
      }
      const since = Math.max(this.candidates.get(r.id)?.unnamedSinceMs ?? nowMs, lastCreate(r.id) ?? -Infinity);
      this.candidates.set(r.id, { id: r.id, name: r.name, pool: r.pool, bytes: r.capacityBytes, unnamedSinceMs: since });
    }
    for (const id of this.candidates.keys()) if (!present.has(id)) this.candidates.delete(id);
    return [...this.candidates.values()].filter((c) => this.isDue(c, nowMs));
  }

  isDue(c: Candidate, nowMs: number): boolean {
    return nowMs - c.unnamedSinceMs >= this.graceMs;
  }

  /** The current candidate for `id`, if any. */
  get(id: string): Candidate | undefined {
    return this.candidates.get(id);
  }

  /** Ids watched but not yet due, for the log. */
  watched(nowMs: number): Candidate[] {
    return [...this.candidates.values()].filter((c) => !this.isDue(c, nowMs));
  }
}
