// A scenario's driverApi (on unless it says false): the cluster serves its API on loopback before the drivers start, and every driver reaches it with its kubeconfig.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { loadScenario } from '../../src/bench/scenario/scenario-file.js';
import { needsRoot, runBuiltIn, SCENARIOS } from './run-helpers.js';

describe('driverApi in scenario files', () => {
  it('is on without a driverApi line, as the DaemonSet gives drivers API access; driverApi: false and the override (--upstream) turn it off', () => {
    assert.equal(loadScenario(join(SCENARIOS, '03-stale-capacity/scenario.yaml')).driverApi, true);
    assert.equal(loadScenario(join(SCENARIOS, '04-two-claims/scenario.yaml')).driverApi, false, 'the upstream limitation is shown without API access');
    assert.equal(loadScenario(join(SCENARIOS, '03-stale-capacity/scenario.yaml'), undefined, { driverApi: false }).driverApi, false);
  });
});

describe('drivers with API access (driverApi)', { skip: needsRoot }, () => {
  it('each driver checks its credentials with a GET of its Node through the run\'s own API', async () => {
    const r = await runBuiltIn('04-two-claims/scenario.yaml', undefined, { driverApi: true });
    const gets = r.apiRequests.filter((x) => x.client === 'external/lode-driver' && x.verb === 'get' && x.resource === 'nodes');
    assert.equal(gets.reduce((n, x) => n + x.count, 0), 2, 'one start-up check per node (two nodes)');
  });

  it('without it (driverApi: false) the drivers make no API request at all', async () => {
    const r = await runBuiltIn('04-two-claims/scenario.yaml');
    assert.deepEqual(r.apiRequests.filter((x) => x.client.includes('lode-driver')), []);
  });
});
