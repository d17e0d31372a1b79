// Reads the figures the data-path benchmark needs out of fio's --output-format=json report.

/** One direction (read or write) of one fio job. */
export interface FioDirection {
  iops: number;
  /** Bytes per second over the job's runtime (which includes an end_fsync). */
  bwBytes: number;
  ioBytes: number;
}

export interface FioResult {
  jobName: string;
  read: FioDirection;
  write: FioDirection;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function num(obj: Record<string, unknown>, key: string, where: string): number {
  const v = obj[key];
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new Error(`fio report: ${where}.${key} is not a number`);
  return v;
}

function direction(job: Record<string, unknown>, key: 'read' | 'write'): FioDirection {
  const d = job[key];
  if (!isRecord(d)) throw new Error(`fio report: job has no "${key}" section`);
  return { iops: num(d, 'iops', key), bwBytes: num(d, 'bw_bytes', key), ioBytes: num(d, 'io_bytes', key) };
}

/**
 * Parses fio's JSON report of a single job. fio may print notes (e.g. about queue depth)
 * on stdout ahead of the JSON, so anything before the first line that opens an object is
 * skipped. A job fio reports as failed is an error, not a row of zeroes.
 */
export function parseFioJson(text: string): FioResult {
  const start = text.startsWith('{') ? 0 : text.indexOf('\n{') + 1;
  if (start === 0 && !text.startsWith('{')) throw new Error('fio report: no JSON object in the output');
  const doc: unknown = JSON.parse(text.slice(start));
  if (!isRecord(doc) || !Array.isArray(doc.jobs)) throw new Error('fio report: no "jobs" array');
  if (doc.jobs.length !== 1) throw new Error(`fio report: expected one job, got ${doc.jobs.length}`);
  const job: unknown = doc.jobs[0];
  if (!isRecord(job)) throw new Error('fio report: job is not an object');
  const jobName = typeof job.jobname === 'string' ? job.jobname : '';
  const error = job.error;
  if (error !== 0) throw new Error(`fio report: job "${jobName}" failed with error ${String(error)}`);
  return { jobName, read: direction(job, 'read'), write: direction(job, 'write') };
}
