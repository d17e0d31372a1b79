// The probe command: asks the driver's /healthz over loopback (kubectl exec, by hand), exit status following the answer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { DriverMetrics } from '../../src/metrics/driver-metrics.js';
import { startHttpEndpoint, type HealthReport } from '../../src/metrics/http-endpoint.js';
import { probeHealth } from '../../src/metrics/health-probe.js';

// dist/test/metrics/ -> dist/src/metrics/health-probe.js, the path docs/operations.md has operators run.
const PROBE = fileURLToPath(new URL('../../src/metrics/health-probe.js', import.meta.url));

function runProbe(env: Record<string, string>, args: string[] = []): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [PROBE, ...args], { env: { ...process.env, ...env } }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === 'number' ? err.code : -1;
      resolve({ code, out: stdout + stderr });
    });
  });
}

test('probeHealth follows the endpoint, dialing a wildcard address on loopback', async (t) => {
  let report: HealthReport = { ready: true };
  const ep = await startHttpEndpoint(':0', new DriverMetrics({ poolStats: () => [] }), async () => report);
  t.after(() => ep.close());
  assert.equal((await probeHealth(`:${ep.port}`, 2000)).healthy, true);
  assert.equal((await probeHealth(`0.0.0.0:${ep.port}`, 2000)).healthy, true);
  report = { ready: false, message: 'pools not loaded' };
  const r = await probeHealth(`127.0.0.1:${ep.port}`, 2000);
  assert.equal(r.healthy, false);
  assert.match(r.detail, /503 pools not loaded/);
});

test('probeHealth reports a closed port as unhealthy instead of throwing', async () => {
  const ep = await startHttpEndpoint('127.0.0.1:0', new DriverMetrics({ poolStats: () => [] }), async () => ({ ready: true }));
  const port = ep.port;
  await ep.close();
  const r = await probeHealth(`127.0.0.1:${port}`, 2000);
  assert.equal(r.healthy, false);
  assert.match(r.detail, /ECONNREFUSED/);
});

test('the probe command exits 0 when ready, 1 when not, 2 when misconfigured', async (t) => {
  let report: HealthReport = { ready: true };
  const ep = await startHttpEndpoint('127.0.0.1:0', new DriverMetrics({ poolStats: () => [] }), async () => report);
  t.after(() => ep.close());
  const env = { LODE_METRICS_ADDRESS: `127.0.0.1:${ep.port}` };
  let r = await runProbe(env);
  assert.equal(r.code, 0, r.out);
  report = { ready: false, message: 'not yet' };
  r = await runProbe(env);
  assert.equal(r.code, 1, r.out);
  assert.match(r.out, /not yet/);
  r = await runProbe({ LODE_METRICS_ADDRESS: '' });
  assert.equal(r.code, 2, r.out);
  r = await runProbe({}, ['nonsense']);
  assert.equal(r.code, 2, r.out);
  assert.match(r.out, /invalid metrics address/);
});
