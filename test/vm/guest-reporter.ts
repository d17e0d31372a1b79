// A node:test reporter used inside the VM: one JSON line per finished test, which the host turns back
// into test results (failures carry the guest's error rendered in full), and one per diagnostic a test printed.
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
  /** What the test printed with t.diagnostic (counts, what it skipped and why), in order. */
  diagnostics?: string[];
}

/** A test's diagnostic; node:test reports it after the test's own result, at the same nesting. */
export interface GuestDiagnostic {
  diagnostic: string;
  nesting: number;
}

/** The run's closing totals, which node:test reports as diagnostics too: not any test's own. */
const TOTALS = /^(tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) [\d.]+$/;

/** Lines of the reporter's output back as results, each diagnostic given to the latest result at its nesting. */
export function parseGuestResults(text: string): GuestTestResult[] {
  const results: GuestTestResult[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    let parsed: GuestTestResult | GuestDiagnostic;
    try {
      parsed = JSON.parse(line) as GuestTestResult | GuestDiagnostic;
    } catch {
      // The last line of a file whose guest was killed mid-write; the file's problem says so.
      continue;
    }
    if ('diagnostic' in parsed) {
      const nesting = parsed.nesting;
      const owner = [...results].reverse().find((r) => r.nesting === nesting);
      if (owner) (owner.diagnostics ??= []).push(parsed.diagnostic);
    } else {
      results.push(parsed);
    }
  }
  return results;
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
    if (event.type === 'test:diagnostic') {
      if (!TOTALS.test(event.data.message)) yield `${JSON.stringify({ diagnostic: event.data.message, nesting: event.data.nesting } satisfies GuestDiagnostic)}\n`;
      continue;
    }
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
