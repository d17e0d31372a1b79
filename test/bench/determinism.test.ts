// Same scenario and seed twice -> the same event sequence, despite real driver latency and the drivers' API requests.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { RunResult } from '../../src/bench/scenario/run-result.js';
import { eventKey, needsRoot, runBuiltIn } from './run-helpers.js';

/** The run's drivers had API access, as every scenario without a driverApi line gives them: their start-up GET of their Node. */
function withDriverApi(r: RunResult): void {
  assert.ok(r.apiRequests.some((x) => x.client === 'external/lode-driver' && x.verb === 'get' && x.resource === 'nodes'), 'the drivers ran with API access');
}

describe('determinism', { skip: needsRoot }, () => {
  it('02-immediate (random becomeOwner delays) gives identical events for the same seed', async () => {
    const a = await runBuiltIn('02-immediate-vs-wffc/scenario-immediate.yaml', 3);
    const b = await runBuiltIn('02-immediate-vs-wffc/scenario-immediate.yaml', 3);
    assert.ok(a.events.length > 10);
    withDriverApi(a);
    assert.deepEqual(b.events.map(eventKey), a.events.map(eventKey));
    assert.deepEqual(b.pods, a.pods);
    assert.deepEqual(b.claims, a.claims);
  });

  it('03-stale-capacity (ResourceExhausted and rescheduling) gives identical events for the same seed', async () => {
    const a = await runBuiltIn('03-stale-capacity/scenario.yaml', 7);
    const b = await runBuiltIn('03-stale-capacity/scenario.yaml', 7);
    withDriverApi(a);
    assert.deepEqual(b.events.map(eventKey), a.events.map(eventKey));
  });

  it('11-quota-directories (each node\'s driver posts an Event through the API as it starts) gives identical events for the same seed', async () => {
    // The two drivers start side by side; which one's Event reaches the API first is wall-time
    // chance, and the run applies writes queued together in the clients' order, not arrival's.
    const a = await runBuiltIn('11-quota-directories/scenario.yaml', 2);
    const b = await runBuiltIn('11-quota-directories/scenario.yaml', 2);
    assert.equal(a.events.filter((e) => e.reason === 'ApiWrite' && e.source === 'api/lode-driver').length, 2, 'one PoolLimitsEscapable Event per node');
    assert.deepEqual(b.events.map(eventKey), a.events.map(eventKey));
  });
});
