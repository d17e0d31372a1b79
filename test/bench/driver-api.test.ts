// A scenario's driverApi: the cluster serves its API on loopback before the drivers start, and every driver reaches it with its kubeconfig.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { needsRoot, runBuiltIn } from './run-helpers.js';

describe('drivers with API access (driverApi)', { skip: needsRoot }, () => {
  it('each driver checks its credentials with a GET of its Node through the run\'s own API', async () => {
    const r = await runBuiltIn('04-two-claims/scenario.yaml', undefined, { driverApi: true });
    const gets = r.apiRequests.filter((x) => x.client === 'external/lode-driver' && x.verb === 'get' && x.resource === 'nodes');
    assert.equal(gets.reduce((n, x) => n + x.count, 0), 2, 'one start-up check per node (two nodes)');
  });

  it('without it the drivers make no API request at all', async () => {
    const r = await runBuiltIn('04-two-claims/scenario.yaml');
    assert.deepEqual(r.apiRequests.filter((x) => x.client.includes('lode-driver')), []);
  });
});
