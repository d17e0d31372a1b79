// What every controller gets: the API store, the clock, the event log, seeded randomness and metrics.
import type { ObjectStore } from '../api/object-store.js';
import type { EventLog } from '../api/event-log.js';
import type { VirtualClock } from '../clock/virtual-clock.js';
import type { SeededRandom } from './seeded-random.js';
import type { BenchMetrics } from './metrics.js';

export interface BenchContext {
  store: ObjectStore;
  clock: VirtualClock;
  events: EventLog;
  random: SeededRandom;
  metrics: BenchMetrics;
  /** The CSI driver name the node drivers register, e.g. "lode.csi.dev". */
  driverName: string;
  /** Namespace the capacity objects live in (the provisioner's NAMESPACE). */
  systemNamespace: string;
}
