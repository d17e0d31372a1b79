// The VolumeBinding plugin's Score with StorageCapacityScoring (KEP-4049): a node's score from how much of its published capacity the pod's new volumes would use, through a utilization shape.

/** `spread` is the upstream default shape (most free capacity wins), `pack` the reversed one, `none` the plugin without the feature gate. */
export const SCORINGS = ['spread', 'pack', 'none'] as const;
export type Scoring = (typeof SCORINGS)[number];

export function isScoring(value: string): value is Scoring {
  return (SCORINGS as readonly string[]).includes(value);
}

/** One point of VolumeBindingArgs.shape: utilization 0-100, score 0-10. */
export interface ShapePoint {
  utilization: number;
  score: number;
}

/** The default shape with the gate on: a node whose capacity the volumes would use least scores highest. */
export const SPREAD_SHAPE: readonly ShapePoint[] = [{ utilization: 0, score: 10 }, { utilization: 100, score: 0 }];
/** The reversed shape: the node the volumes would fill most scores highest. */
export const PACK_SHAPE: readonly ShapePoint[] = [{ utilization: 0, score: 0 }, { utilization: 100, score: 10 }];

/** What a pod's new volumes of one storage class ask of a node, and what the node published for that class. */
export interface ClassDemand {
  requestedBytes: number;
  capacityBytes: number;
}

/** The shape scaled from 0-10 to the framework's node scores of 0-100, as the plugin scales it. */
const SCALE = 10;

/** Piecewise-linear through the shape's points, flat beyond its ends; integer steps, as upstream computes it. */
function shapeScore(shape: readonly ShapePoint[], utilization: number): number {
  const points = shape.map((p) => ({ u: p.utilization, s: p.score * SCALE }));
  if (utilization <= points[0]!.u) return points[0]!.s;
  for (let i = 1; i < points.length; i++) {
    const a = points[i - 1]!;
    const b = points[i]!;
    if (utilization <= b.u) return a.s + Math.trunc(((b.s - a.s) * (utilization - a.u)) / (b.u - a.u));
  }
  return points[points.length - 1]!.s;
}

/**
 * The plugin's score (0-100) for one node: each class's utilization (requested over the
 * published capacity, in whole percent; 100 when nothing is published or the request is
 * larger) through the shape, averaged over the classes and rounded. No demand scores 0.
 */
export function capacityScore(shape: readonly ShapePoint[], demands: readonly ClassDemand[]): number {
  if (demands.length === 0) return 0;
  let total = 0;
  for (const d of demands) {
    const utilization = d.capacityBytes <= 0 || d.requestedBytes > d.capacityBytes ? 100 : Math.trunc((d.requestedBytes * 100) / d.capacityBytes);
    total += shapeScore(shape, utilization);
  }
  return Math.round(total / demands.length);
}

/** One new volume the pod would get on a node: its class, its request, and the capacity of the CSIStorageCapacity that Filter matched for it (undefined: its driver does not track capacity). */
export interface ProvisionDemand {
  className: string;
  requestedBytes: number;
  capacityBytes: number | undefined;
}

/**
 * The VolumeBinding Score of one node with the gate on: requests summed per class, each class's
 * capacity that of the object Filter matched (set, not summed: two claims of one class meet the
 * same object), claims without a matched object left out; 0 when the pod binds an existing PV,
 * which keeps the static-binding score. The bench's scheduler and `lode plan` both score with it.
 */
export function volumeBindingScore(shape: readonly ShapePoint[], provisions: readonly ProvisionDemand[], staticBindings: number): number {
  if (staticBindings > 0) return 0;
  const demand = new Map<string, ClassDemand>();
  for (const p of provisions) {
    if (p.capacityBytes === undefined) continue;
    const d = demand.get(p.className) ?? { requestedBytes: 0, capacityBytes: 0 };
    d.capacityBytes = p.capacityBytes;
    d.requestedBytes += p.requestedBytes;
    demand.set(p.className, d);
  }
  return capacityScore(shape, [...demand.values()]);
}

export function shapeFor(scoring: Scoring): readonly ShapePoint[] | undefined {
  return scoring === 'spread' ? SPREAD_SHAPE : scoring === 'pack' ? PACK_SHAPE : undefined;
}
