// The HTTP endpoint over real loopback sockets: paths, status codes, address errors, shutdown.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { connect, createServer, type Socket } from 'node:net';
import { once } from 'node:events';
import { DriverMetrics, METRIC_NAMES } from '../../src/metrics/driver-metrics.js';
import { startHttpEndpoint, type HealthReport } from '../../src/metrics/http-endpoint.js';
import { parseListenAddress } from '../../src/metrics/listen-address.js';
import type { PoolStats } from '../../src/pool/pool-stats.js';
import { parseExposition, sampleValue } from './prom-text.js';

const pool: PoolStats = {
  name: 'fast', backend: 'loopfile', capacityBytes: 5_000_000, allocatedBytes: 1_000_000, availableBytes: 4_000_000, volumes: 1, quarantinedVolumes: 0, dataPath: 'direct-io',
};
const metrics = (): DriverMetrics => new DriverMetrics({ poolStats: () => [pool] }, { driverName: 'lode.csi.dev', nodeId: 'n1' });
const ready = async (): Promise<HealthReport> => ({ ready: true });

interface Reply { status: number; body: string; headers: Record<string, string | string[] | undefined> }

function get(port: number, path: string, method = 'GET', host = '127.0.0.1'): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request({ host, port, path, method }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('GET /metrics serves the driver metrics with the Prometheus content type', async (t) => {
  const m = metrics();
  m.onRpc('/csi.v1.Controller/CreateVolume', 'OK', 0.1);
  const ep = await startHttpEndpoint('127.0.0.1:0', m, ready);
  t.after(() => ep.close());
  assert.ok(ep.port > 0);
  const r = await get(ep.port, '/metrics');
  assert.equal(r.status, 200);
  assert.match(String(r.headers['content-type']), /^text\/plain; version=0\.0\.4/);
  const s = parseExposition(r.body);
  assert.equal(sampleValue(s, METRIC_NAMES.poolAvailable, { pool: 'fast' }), 4_000_000);
  assert.equal(sampleValue(s, METRIC_NAMES.rpcTotal, { method: 'CreateVolume', code: 'OK' }), 1);
});

test('GET /healthz answers 200 "ok" when ready and 503 with the reason when not', async (t) => {
  let report: HealthReport = { ready: true };
  const ep = await startHttpEndpoint('127.0.0.1:0', metrics(), async () => report);
  t.after(() => ep.close());
  let r = await get(ep.port, '/healthz');
  assert.equal(r.status, 200);
  assert.equal(r.body.trim(), 'ok');
  report = { ready: true, warnings: ['volume lv-1 in pool fast is quarantined', 'volume lv-2 in pool fast is quarantined'] };
  r = await get(ep.port, '/healthz');
  assert.equal(r.status, 200, 'warnings leave the driver ready');
  assert.equal(r.body, 'ok\nwarning: volume lv-1 in pool fast is quarantined\nwarning: volume lv-2 in pool fast is quarantined\n');
  report = { ready: false, message: 'pool "fast": /var/lib/lode/fast is not mounted' };
  r = await get(ep.port, '/healthz');
  assert.equal(r.status, 503);
  assert.equal(r.body.trim(), 'pool "fast": /var/lib/lode/fast is not mounted');
  report = { ready: false };
  r = await get(ep.port, '/healthz');
  assert.equal(r.status, 503);
  assert.equal(r.body.trim(), 'not ready');
});

test('a health check that throws or hangs is reported as 503, not as a hung request', async (t) => {
  const failing = await startHttpEndpoint('127.0.0.1:0', metrics(), async () => {
    throw new Error('state file unreadable');
  });
  t.after(() => failing.close());
  let r = await get(failing.port, '/healthz');
  assert.equal(r.status, 503);
  assert.match(r.body, /state file unreadable/);

  const hanging = await startHttpEndpoint('127.0.0.1:0', metrics(), () => new Promise<HealthReport>(() => {}), {
    healthTimeoutMs: 50,
  });
  t.after(() => hanging.close());
  r = await get(hanging.port, '/healthz');
  assert.equal(r.status, 503);
  assert.match(r.body, /did not answer within 50 ms/);
});

test('unknown paths get 404 and other methods 405', async (t) => {
  const ep = await startHttpEndpoint('127.0.0.1:0', metrics(), ready);
  t.after(() => ep.close());
  assert.equal((await get(ep.port, '/')).status, 404);
  assert.equal((await get(ep.port, '/metricsx')).status, 404);
  const post = await get(ep.port, '/metrics', 'POST');
  assert.equal(post.status, 405);
  assert.equal(post.headers['allow'], 'GET, HEAD');
  const head = await get(ep.port, '/healthz', 'HEAD');
  assert.equal(head.status, 200);
  assert.equal(head.body, '');
  // Query strings are ignored, as Prometheus and kubelet may add them.
  assert.equal((await get(ep.port, '/healthz?verbose=1')).status, 200);
});

test('a port in use is reported with the address and the reason', async (t) => {
  const first = await startHttpEndpoint('127.0.0.1:0', metrics(), ready);
  t.after(() => first.close());
  await assert.rejects(
    startHttpEndpoint(`127.0.0.1:${first.port}`, metrics(), ready),
    (err: Error) => {
      assert.match(err.message, new RegExp(`127\\.0\\.0\\.1:${first.port}`));
      assert.match(err.message, /already in use/);
      return true;
    },
  );
});

test('malformed addresses are rejected before anything listens', async () => {
  for (const bad of ['9809', 'localhost', '127.0.0.1:99999', '127.0.0.1:', '::1:9809', '[::1]9809', '[nope]:1',
    'http://127.0.0.1:9809', '127.0.0.1:98a', 'a b:1', '']) {
    await assert.rejects(startHttpEndpoint(bad, metrics(), ready), /invalid metrics address/, `accepted "${bad}"`);
  }
});

test('the accepted address forms parse to host and port', () => {
  assert.deepEqual(parseListenAddress('127.0.0.1:9809'), { host: '127.0.0.1', port: 9809 });
  assert.deepEqual(parseListenAddress(':9809'), { host: undefined, port: 9809 });
  assert.deepEqual(parseListenAddress('[::1]:0'), { host: '::1', port: 0 });
  assert.deepEqual(parseListenAddress('[::]:9809'), { host: '::', port: 9809 });
  assert.deepEqual(parseListenAddress('localhost:9809'), { host: 'localhost', port: 9809 });
});

test('":PORT" listens on every interface, reachable over loopback', async (t) => {
  const ep = await startHttpEndpoint(':0', metrics(), ready);
  t.after(() => ep.close());
  assert.equal((await get(ep.port, '/healthz')).status, 200);
});

test('"[::1]:0" listens on IPv6 loopback when the host has it', async (t) => {
  const v6 = await new Promise<boolean>((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen({ host: '::1', port: 0 }, () => s.close(() => resolve(true)));
  });
  if (!v6) {
    t.skip('no IPv6 loopback on this host');
    return;
  }
  const ep = await startHttpEndpoint('[::1]:0', metrics(), ready);
  t.after(() => ep.close());
  assert.equal((await get(ep.port, '/healthz', 'GET', '::1')).status, 200);
});

test('close() ends a keep-alive connection and one in the middle of a request itself, and frees the port', { timeout: 60_000 }, async () => {
  const ep = await startHttpEndpoint('127.0.0.1:0', metrics(), ready);
  const { Agent } = await import('node:http');
  const agent = new Agent({ keepAlive: true });
  const idle = await new Promise<Socket>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: ep.port, path: '/healthz', agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(req.socket as Socket));
    });
    req.on('error', reject).end();
  });
  // Half a request: a server that waits for its connections would wait for this one for a minute
  // (its headers timeout), long past the test's own bound, whatever the machine's speed.
  const partial = connect(ep.port, '127.0.0.1');
  await once(partial, 'connect');
  partial.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
  // The server's end may come as a reset: that is the end asked for, not a failure.
  for (const s of [idle, partial]) s.on('error', () => undefined);
  const ended = [idle, partial].map((s) => new Promise((resolve) => s.once('close', resolve)));
  await ep.close();
  // Neither client ended its connection: the server did, as part of close().
  await Promise.all(ended);
  assert.ok(idle.destroyed && partial.destroyed, 'both connections were ended by the server');
  agent.destroy();
  const again = await startHttpEndpoint(`127.0.0.1:${ep.port}`, metrics(), ready);
  await again.close();
});
