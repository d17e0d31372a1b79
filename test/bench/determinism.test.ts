// Same scenario and seed twice -> the same event sequence, despite real driver latency.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { eventKey, needsRoot, runBuiltIn } from './run-helpers.js';

describe('determinism', { skip: needsRoot }, () => {
  it('02-immediate (random becomeOwner delays) gives identical events for the same seed', async () => {
    const a = await runBuiltIn('02-immediate-vs-wffc/scenario-immediate.yaml', 3);
    const b = await runBuiltIn('02-immediate-vs-wffc/scenario-immediate.yaml', 3);
    assert.ok(a.events.length > 10);
    assert.deepEqual(b.events.map(eventKey), a.events.map(eventKey));
    assert.deepEqual(b.pods, a.pods);
    assert.deepEqual(b.claims, a.claims);
  });

  it('03-stale-capacity (ResourceExhausted and rescheduling) gives identical events for the same seed', async () => {
    const a = await runBuiltIn('03-stale-capacity/scenario.yaml', 7);
    const b = await runBuiltIn('03-stale-capacity/scenario.yaml', 7);
    assert.deepEqual(b.events.map(eventKey), a.events.map(eventKey));
  });
});
