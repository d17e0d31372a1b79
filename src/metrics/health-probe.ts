#!/usr/bin/env node
// Probe command for a look by hand (kubectl exec): asks the driver's /healthz over loopback, so the endpoint need not be on the pod network.
import { request } from 'node:http';
import { pathToFileURL } from 'node:url';
import { dialHost, parseListenAddress, urlHost } from './listen-address.js';

/** Outcome of one probe: `healthy` when /healthz answered 200. */
export interface ProbeResult {
  healthy: boolean;
  detail: string;
}

/**
 * GETs /healthz of a driver listening on `address` (the value of --metrics-address). A wildcard
 * listen address is dialed on loopback.
 *
 * @example
 * const { healthy, detail } = await probeHealth('127.0.0.1:9809', 3000);
 */
export async function probeHealth(address: string, timeoutMs: number): Promise<ProbeResult> {
  const parsed = parseListenAddress(address);
  const host = dialHost(parsed);
  const url = `http://${urlHost(host, parsed.port)}/healthz`;
  return new Promise<ProbeResult>((resolve) => {
    const req = request(url, { method: 'GET', timeout: timeoutMs }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        // A health answer is one line; cap it so a misbehaving server cannot flood the probe.
        if (body.length < 4096) body += chunk;
      });
      res.on('end', () => {
        const text = body.trim();
        resolve({ healthy: res.statusCode === 200, detail: `${url}: ${res.statusCode ?? '?'} ${text}` });
      });
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', (err) => resolve({ healthy: false, detail: `${url}: ${err.message}` }));
    req.end();
  });
}

async function main(argv: string[]): Promise<number> {
  const address = argv[0] ?? process.env['LODE_METRICS_ADDRESS'];
  if (address === undefined || address === '') {
    process.stderr.write('usage: health-probe HOST:PORT (or set LODE_METRICS_ADDRESS)\n');
    return 2;
  }
  let result: ProbeResult;
  try {
    result = await probeHealth(address, 3_000);
  } catch (err) {
    process.stderr.write(`health-probe: ${err instanceof Error ? err.message : String(err)}\n`);
    return 2;
  }
  // Whoever runs it (an operator, a script) sees what was seen.
  (result.healthy ? process.stdout : process.stderr).write(result.detail + '\n');
  return result.healthy ? 0 : 1;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
