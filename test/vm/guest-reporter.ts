// A node:test reporter used inside the VM: one JSON line per finished test, which the host turns back
// into test results; failures carry the guest's error rendered in full.
import type { TestEvent } from 'node:test/reporters';
import { inspect } from 'node:util';

export interface GuestTestResult {
  name: string;
  nesting: number;
  outcome: 'pass' | 'fail' | 'skip' | 'todo';
  /** The skip or todo reason, or the rendered error of a failure. */
  message?: string;
  durationMs: number;
  file?: string;
}

function reason(v: string | boolean | undefined): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

// node:test wraps what a test threw in ERR_TEST_FAILURE; the cause is what the author wants to see.
function renderError(error: Error): string {
  const cause = (error as { cause?: unknown }).cause;
  return inspect(cause ?? error, { depth: 6, breakLength: 120 });
}

export default async function* guestReporter(source: AsyncIterable<TestEvent>): AsyncGenerator<string, void> {
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const d = event.data;
    const base = { name: d.name, nesting: d.nesting, durationMs: d.details.duration_ms, file: d.file };
    let result: GuestTestResult;
    if (d.skip !== undefined && d.skip !== false) result = { ...base, outcome: 'skip', message: reason(d.skip) };
    else if (d.todo !== undefined && d.todo !== false) result = { ...base, outcome: 'todo', message: reason(d.todo) };
    else if (event.type === 'test:fail') result = { ...base, outcome: 'fail', message: renderError(event.data.details.error) };
    else result = { ...base, outcome: 'pass' };
    yield `${JSON.stringify(result)}\n`;
  }
}
