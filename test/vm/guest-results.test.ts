// How the guest reporter's lines come back as results: each diagnostic with the test that printed it, the run's totals with none.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestEvent } from 'node:test/reporters';
import guestReporter, { parseGuestResults } from './guest-reporter.js';

function pass(name: string, nesting: number): TestEvent {
  return { type: 'test:pass', data: { name, nesting, details: { duration_ms: 1 }, testNumber: 1 } } as unknown as TestEvent;
}
function diagnostic(message: string, nesting: number): TestEvent {
  return { type: 'test:diagnostic', data: { message, nesting } } as unknown as TestEvent;
}

async function report(events: TestEvent[]): Promise<string> {
  async function* source(): AsyncGenerator<TestEvent> { yield* events; }
  let out = '';
  for await (const line of guestReporter(source())) out += line;
  return out;
}

test('a diagnostic goes back to the latest test at its nesting; the closing totals and a torn last line to nothing', async () => {
  // node:test reports a test's diagnostics after its result, at its nesting, and the totals last.
  const out = await report([
    pass('inner', 1), diagnostic('inner: 3 passed', 1),
    pass('outer', 0), diagnostic('outer says hi', 0), diagnostic('and again', 0),
    pass('second', 0),
    diagnostic('tests 3', 0), diagnostic('pass 3', 0), diagnostic('duration_ms 12.5', 0),
  ]);
  const results = parseGuestResults(`${out}{"name":"torn`);
  assert.deepEqual(results.map((r) => [r.name, r.outcome, r.diagnostics]), [
    ['inner', 'pass', ['inner: 3 passed']],
    ['outer', 'pass', ['outer says hi', 'and again']],
    ['second', 'pass', undefined],
  ]);
  // A diagnostic before any test at its nesting has no owner and is dropped rather than misattributed.
  assert.deepEqual(parseGuestResults(`${JSON.stringify({ diagnostic: 'orphan', nesting: 0 })}\n`), []);
});
