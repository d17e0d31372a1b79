// The waits of a list-and-watch client: a pause and a wait for caches that end early when their signal aborts, and leave nothing on it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { pause, untilSynced } from '../../src/kube/watch-timing.js';

describe('untilSynced', () => {
  it('ends when the caches sync, and takes its listener off the signal', async () => {
    const signal = new AbortController().signal;
    for (let i = 0; i < 20; i++) await untilSynced(Promise.resolve(), signal);
    assert.equal(getEventListeners(signal, 'abort').length, 0);
  });

  it('ends when the signal aborts first, and at once when it already has', async () => {
    const stop = new AbortController();
    const never = new Promise<void>(() => undefined);
    const waiting = untilSynced(never, stop.signal);
    stop.abort();
    await waiting;
    await untilSynced(never, stop.signal);
  });

  it('rejects as the caches\' promise does, leaving no listener', async () => {
    const signal = new AbortController().signal;
    await assert.rejects(untilSynced(Promise.reject(new Error('list failed')), signal), /list failed/);
    assert.equal(getEventListeners(signal, 'abort').length, 0);
  });
});

describe('pause', () => {
  it('ends early on abort and leaves no listener when it runs out', async () => {
    const stop = new AbortController();
    await pause(1, stop.signal);
    assert.equal(getEventListeners(stop.signal, 'abort').length, 0);
    const long = pause(60_000, stop.signal);
    stop.abort();
    await long;
  });
});
