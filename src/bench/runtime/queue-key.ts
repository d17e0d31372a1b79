// A controller's queue key that says which work it is ("pvc", "pv", "sweep") and on which object, for controllers with more than one kind of work.

/**
 * `<work>:<object>`: one string, so the work queue de-duplicates and orders keys as plain
 * strings, and error and livelock messages show them as they are. The object is a name, a
 * namespace/name, or empty for work on no one object (a resync).
 */
export type QueueKey<Work extends string> = `${Work}:${string}`;

/** The key for `work` on `object` (a name or namespace/name; empty for work on no one object). */
export function queueKey<Work extends string>(work: Work, object = ''): QueueKey<Work> {
  return `${work}:${object}`;
}

/** The work and the object of a key; the work is everything before the first ':' (work names have none). */
export function parseQueueKey<Work extends string>(key: QueueKey<Work>): { work: Work; object: string } {
  const colon = key.indexOf(':');
  return { work: key.slice(0, colon) as Work, object: key.slice(colon + 1) };
}
