// Real kubectl reading the Event objects: `describe pod` finds the pod's events by field selector, `get events` prints their table.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventLog } from '../../../src/bench/api/event-log.js';
import { eventObjects } from '../../../src/bench/apiserver/event-objects.js';
import { fieldsMatch, parseFieldSelector } from '../../../src/bench/apiserver/field-selector.js';
import { toTable } from '../../../src/bench/apiserver/tables/table.js';
import { VIRTUAL_EPOCH_MS } from '../../../src/bench/clock/virtual-clock.js';
import { KUBECTL_BINARIES, kubectlFlags, kubectlSkip, runKubectl } from './kubectl-runner.js';

/** As in table-kubectl.test.ts: the machine's kubectl, and Debian's 1.20 client when KUBECTL_DEB names it. */

const POD = {
  apiVersion: 'v1', kind: 'Pod',
  metadata: { name: 'db-0', namespace: 'shop', uid: '0000b000-0000-4000-8000-00000000000a', resourceVersion: '5', creationTimestamp: '2026-01-01T00:00:00Z' },
  spec: { nodeName: 'worker-a', containers: [{ name: 'pg', image: 'postgres:16' }] },
  status: { phase: 'Pending' },
};

let t = 0;
const log = new EventLog(() => t);
log.record('default-scheduler', POD, 'Normal', 'Scheduled', 'Successfully assigned shop/db-0 to worker-a');
t = 5_000;
log.record('kubelet/worker-a', POD, 'Warning', 'FailedMount', 'MountVolume.MountDevice failed for volume "pvc-1"');
t = 9_000;
log.record('kubelet/worker-a', POD, 'Warning', 'FailedMount', 'MountVolume.MountDevice failed for volume "pvc-1"');
log.record('default-scheduler', { kind: 'Pod', metadata: { name: 'db-1', namespace: 'shop', uid: 'other' } }, 'Normal', 'Scheduled', 'Successfully assigned shop/db-1 to worker-b');
const EVENTS = eventObjects(log);

/** A fake API server: discovery, the pod, and its namespace's events (filtered by field selector, Table when asked). */
function fakeApiServer(): Promise<Server> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const send = (code: number, body: unknown): void => { res.writeHead(code, { 'content-type': 'application/json' }); res.end(JSON.stringify(body)); };
    const resource = (name: string, kind: string, shortNames: string[]): Record<string, unknown> => ({ name, singularName: kind.toLowerCase(), namespaced: true, kind, verbs: ['get', 'list', 'watch'], shortNames });
    switch (url.pathname) {
      case '/version': return send(200, { major: '1', minor: '32', gitVersion: 'v1.32.0' });
      case '/api': return send(200, { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [] });
      case '/apis': return send(200, { kind: 'APIGroupList', apiVersion: 'v1', groups: [] });
      case '/api/v1': return send(200, { kind: 'APIResourceList', groupVersion: 'v1', resources: [resource('pods', 'Pod', ['po']), resource('events', 'Event', ['ev'])] });
      case '/api/v1/namespaces/shop/pods/db-0': return send(200, POD);
      case '/api/v1/namespaces/shop/events': {
        const selector = url.searchParams.get('fieldSelector') ?? '';
        const items = EVENTS.filter((e) => fieldsMatch('Event', parseFieldSelector('Event', selector), e));
        if ((req.headers.accept ?? '').includes('as=Table')) {
          return send(200, toTable('Event', items as unknown as Record<string, unknown>[], { now: new Date(VIRTUAL_EPOCH_MS + 60_000), includeObject: 'Metadata', resourceVersion: '9' }));
        }
        return send(200, { kind: 'EventList', apiVersion: 'v1', metadata: { resourceVersion: '9' }, items });
      }
    }
    return send(404, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404 });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

const dir = mkdtempSync(join(tmpdir(), 'lode-events-kubectl-'));
after(() => rmSync(dir, { recursive: true, force: true }));

for (const bin of KUBECTL_BINARIES.length > 0 ? KUBECTL_BINARIES : ['kubectl']) {
  test(`${bin}: describe pod lists the pod's own events, repeats counted; get events prints their table`, { skip: kubectlSkip() ?? false }, async () => {
    const server = await fakeApiServer();
    try {
      const port = (server.address() as AddressInfo).port;
      const base = kubectlFlags(dir, port, 'shop');
      const described = await runKubectl(bin, [...base, 'describe', 'pod', 'db-0']);
      const events = described.slice(described.indexOf('Events:')).split('\n').map((l) => l.trim().split(/\s{2,}/));
      const scheduled = events.find((l) => l[1] === 'Scheduled');
      assert.deepEqual([scheduled?.[0], scheduled?.[3], scheduled?.[4]], ['Normal', 'default-scheduler', 'Successfully assigned shop/db-0 to worker-a']);
      const mount = events.find((l) => l[1] === 'FailedMount');
      assert.equal(mount?.[0], 'Warning');
      assert.match(mount?.[2] ?? '', /\(x2 over /, 'two identical events read as one, counted');
      assert.equal(mount?.[3], 'kubelet');
      assert.ok(!described.includes('worker-b'), 'another pod\'s events are not listed');

      const got = (await runKubectl(bin, [...base, 'get', 'events'])).split('\n').map((l) => l.trim().split(/\s{2,}/));
      assert.deepEqual(got[0], ['LAST SEEN', 'TYPE', 'REASON', 'OBJECT', 'MESSAGE']);
      assert.deepEqual(got.find((l) => l[2] === 'FailedMount'), ['51s', 'Warning', 'FailedMount', 'pod/db-0', 'MountVolume.MountDevice failed for volume "pvc-1"']);
    } finally {
      server.close();
    }
  });
}
