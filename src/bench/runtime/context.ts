// What every controller gets: the API store, the clock, the event log, seeded randomness and metrics.
import type { StoreApi } from '../api/client-view.js';
import type { EventLog } from '../api/event-log.js';
import type { VirtualClock } from '../clock/virtual-clock.js';
import type { SeededRandom } from './seeded-random.js';
import type { BenchMetrics } from './metrics.js';

export interface BenchContext {
  /** The component's own client view of the store (its reads and writes are counted as its requests). */
  store: StoreApi;
  clock: VirtualClock;
  events: EventLog;
  random: SeededRandom;
  metrics: BenchMetrics;
  /** The CSI driver name the node drivers register, e.g. "lode.csi.dev". */
  driverName: string;
  /** Namespace the capacity objects live in (the provisioner's NAMESPACE). */
  systemNamespace: string;
}
