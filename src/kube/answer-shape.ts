// An API answer in the shape of the client-node types the driver is written against: timestamps as Dates, a list's continue token as _continue.
/**
 * The fields of the core, storage and coordination objects typed date-time (Time or MicroTime)
 * in the API's schema. client-node turns them into Dates by type; without its models the
 * names are the guide, and the maps whose keys are anyone's (labels, annotations, ...) are
 * left alone so a label called startTime stays a string.
 */
const DATE_FIELDS = new Set([
  'creationTimestamp', 'deletionTimestamp', 'time',
  'lastHeartbeatTime', 'lastTransitionTime', 'lastProbeTime', 'lastUpdateTime', 'lastPhaseTransitionTime',
  'firstTimestamp', 'lastTimestamp', 'eventTime', 'lastObservedTime',
  'acquireTime', 'renewTime',
  'startTime', 'startedAt', 'finishedAt', 'expirationTimestamp',
]);

/** Fields whose value is a map with free-form keys: nothing under them is a schema field. */
const FREE_MAPS = new Set([
  'labels', 'annotations', 'matchLabels', 'nodeSelector', 'parameters', 'volumeAttributes', 'data', 'binaryData', 'stringData',
  'capacity', 'allocatable', 'limits', 'requests', 'allocatedResources', 'attributes', 'fieldsV1', 'volumeContext',
]);

/** Replaces, in place, the date-time fields' strings of a parsed answer with Dates. */
function reviveDates(value: unknown): void {
  if (Array.isArray(value)) {
    for (const v of value) reviveDates(v);
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  const o = value as Record<string, unknown>;
  for (const [k, v] of Object.entries(o)) {
    if (typeof v === 'string') {
      if (DATE_FIELDS.has(k)) {
        const d = new Date(v);
        if (!Number.isNaN(d.getTime())) o[k] = d;
      }
    } else if (!FREE_MAPS.has(k)) {
      reviveDates(v);
    }
  }
}

/**
 * Shapes a parsed answer in place as client-node's deserialiser would for the driver's types:
 * its dates, and a list's `metadata.continue`, which client-node's V1ListMeta calls `_continue`
 * (the one field of these types whose name differs from the API's).
 */
export function shapeAnswer(value: unknown): void {
  reviveDates(value);
  if (typeof value !== 'object' || value === null || !Array.isArray((value as { items?: unknown }).items)) return;
  const meta = (value as { metadata?: unknown }).metadata;
  if (typeof meta !== 'object' || meta === null) return;
  const m = meta as Record<string, unknown>;
  if (m.continue !== undefined) {
    m._continue = m.continue;
    delete m.continue;
  }
}
