// The data-path benchmark's reading of fio's JSON report: the right figures from a real report's shape, errors not zeroes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseFioJson } from '../../benchmarks/fio-json.js';

/** A fio 3.33 report of a 4 KiB random-read job, trimmed to the fields the bench reads, with a note ahead of it as fio prints one. */
const REPORT = `note: both iodepth >= 1 and synchronous I/O engine are selected, queue depth will be capped at 1
{
  "fio version" : "fio-3.33",
  "timestamp" : 1796124707,
  "jobs" : [
    {
      "jobname" : "randread-direct",
      "groupid" : 0,
      "error" : 0,
      "job options" : { "rw" : "randread", "bs" : "4k", "direct" : "1", "iodepth" : "16", "ioengine" : "libaio" },
      "read" : { "io_bytes" : 179699712, "bw_bytes" : 179520191, "iops" : 43828.171828, "runtime" : 1001 },
      "write" : { "io_bytes" : 1048576, "bw_bytes" : 524288, "iops" : 128.5, "runtime" : 2000 },
      "sync" : { "total_ios" : 0 }
    }
  ]
}
`;

test('reads the job name and each direction\'s IOPS, bandwidth and bytes, past a note before the JSON', () => {
  const r = parseFioJson(REPORT);
  assert.equal(r.jobName, 'randread-direct');
  assert.deepEqual(r.read, { iops: 43828.171828, bwBytes: 179520191, ioBytes: 179699712 });
  assert.deepEqual(r.write, { iops: 128.5, bwBytes: 524288, ioBytes: 1048576 });
});

test('reads a report that starts with the JSON itself', () => {
  const r = parseFioJson(REPORT.slice(REPORT.indexOf('{')));
  assert.equal(r.read.iops, 43828.171828);
});

test('a job fio reports as failed is an error naming it, not a row of zeroes', () => {
  assert.throws(() => parseFioJson(REPORT.replace('"error" : 0', '"error" : 5')), /job "randread-direct" failed with error 5/);
});

test('a report without a number where a figure belongs is refused', () => {
  assert.throws(() => parseFioJson(REPORT.replace('"iops" : 43828.171828', '"iops" : "fast"')), /read\.iops is not a number/);
  assert.throws(() => parseFioJson('fio: no such option --bogus\n'), /no JSON object/);
});

test('a report of more than one job is refused: the bench runs one job per report', () => {
  const doc = JSON.parse(REPORT.slice(REPORT.indexOf('{'))) as { jobs: unknown[] };
  doc.jobs.push(doc.jobs[0]);
  assert.throws(() => parseFioJson(JSON.stringify(doc)), /expected one job, got 2/);
});
