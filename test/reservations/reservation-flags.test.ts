// The pod-reservation flags: on by default with API access, switched off by --pod-reservations false, a lifetime only with API access.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { parseDriverFlags } from '../../src/cli/driver-flags.js';

describe('pod reservation flags', () => {
  const base = ['--endpoint', 'unix:///tmp/x.sock', '--node-id', 'n1', '--pool', `p=${tmpdir()}`];
  it('default on with a 120 s lifetime; off by flag or environment; absent without API access', async () => {
    const on = await parseDriverFlags([...base, '--kubeconfig', '/k'], {}, '1');
    assert.ok(on !== 'help');
    assert.deepEqual(on.config.podReservations, { enabled: true, ttlMs: 120_000 });
    const off = await parseDriverFlags([...base, '--kubeconfig', '/k', '--pod-reservations', 'false', '--reservation-ttl', '30'], {}, '1');
    assert.ok(off !== 'help');
    assert.deepEqual(off.config.podReservations, { enabled: false, ttlMs: 30_000 });
    const env = await parseDriverFlags([...base, '--in-cluster'], { LODE_POD_RESERVATIONS: 'false', LODE_RESERVATION_TTL: '60' }, '1');
    assert.ok(env !== 'help');
    assert.deepEqual(env.config.podReservations, { enabled: false, ttlMs: 60_000 });
    const none = await parseDriverFlags(base, {}, '1');
    assert.ok(none !== 'help' && none.config.podReservations === undefined);
  });

  it('refuses bad values, and a lifetime without API access', async () => {
    await assert.rejects(parseDriverFlags([...base, '--kubeconfig', '/k', '--pod-reservations', 'off'], {}, '1'), /must be true or false/);
    await assert.rejects(parseDriverFlags([...base, '--kubeconfig', '/k', '--reservation-ttl', '0'], {}, '1'), /1 to 3600/);
    await assert.rejects(parseDriverFlags([...base, '--reservation-ttl', '60'], {}, '1'), /needs --in-cluster or --kubeconfig/);
  });
});
