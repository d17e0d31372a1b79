// `lode driver`: parses flags, starts the driver and its metrics endpoint, runs until SIGTERM/SIGINT.
import { readinessProblem, readinessWarnings } from '../driver/controller/identity.js';
import { startDriver } from '../driver/server.js';
import { DriverMetrics } from '../metrics/driver-metrics.js';
import { startHttpEndpoint, type HttpEndpoint } from '../metrics/http-endpoint.js';
import { registerOrphanMetrics } from '../driver/cluster/orphans/orphan-metrics.js';
import { registerProfileMetrics } from '../driver/cluster/profiles/profile-metrics.js';
import { log, setLogLevel } from '../util/log.js';
import { packageVersion } from '../util/version.js';
import { DRIVER_NODE_FLAGS } from '../util/driver-node-flags.js';
import { DRIVER_USAGE, parseDriverFlags } from './driver-flags.js';
import type { CodeCacheUse } from './driver-bundle-loader.js';

/** How the driver's code was loaded (src/cli/driver-bundle-loader.ts); absent when not from the bundle. */
export interface DriverLoad {
  codeCache: CodeCacheUse;
}

export async function runDriverCommand(argv: string[], load?: DriverLoad): Promise<number> {
  // Answered before the flags are checked, as --help is: the version alone needs no endpoint or pools.
  if (argv.includes('--version')) {
    process.stdout.write(`lode ${packageVersion()}\n`);
    return 0;
  }
  let flags;
  try {
    flags = await parseDriverFlags(argv, process.env, packageVersion());
  } catch (err) {
    process.stderr.write(`lode driver: ${(err as Error).message}\n\n${DRIVER_USAGE}`);
    return 2;
  }
  if (flags === 'help') {
    process.stdout.write(DRIVER_USAGE);
    return 0;
  }

  setLogLevel(flags.logLevel);
  // A cache V8 refused makes every start compile the whole bundle: a deployment can see it here.
  if (load !== undefined) {
    log(load.codeCache === 'used' ? 'info' : 'warn', 'driver code loaded', {
      codeCache: load.codeCache,
      ...(load.codeCache === 'used' ? {} : { effect: `each start compiles the driver anew: slower, not wrong; the build's cache fits the Node.js that built it, run with ${DRIVER_NODE_FLAGS.join(' ')} (the image's NODE_OPTIONS)` }),
    });
  }
  if (process.getuid?.() !== 0) {
    process.stderr.write('lode driver: must run as root (it attaches devices and mounts filesystems)\n');
    return 1;
  }
  const config = flags.config;
  if (flags.poolFile !== undefined) log('info', 'pools of this node', { nodeId: config.nodeId, file: flags.poolFile, pools: config.pools.map((p) => p.name) });
  let metrics: DriverMetrics | undefined;
  let driver;
  try {
    // Without an endpoint nothing can read the figures, so none are kept: no observation per
    // call, and no event-loop lag sampler waking the driver (its idle cost, npm run bench (f)).
    driver = await startDriver(config, config.metricsAddress === undefined ? undefined : (ctx) => {
      metrics = new DriverMetrics(ctx.catalog, { driverName: config.driverName, nodeId: config.nodeId });
      return metrics;
    });
  } catch (err) {
    process.stderr.write(`lode driver: ${(err as Error).message}\n`);
    return 1;
  }
  const running = driver;
  if (metrics !== undefined && running.orphans !== undefined) registerOrphanMetrics(metrics.registry, running.orphans, running.ctx.catalog);
  if (metrics !== undefined && running.profiles !== undefined) registerProfileMetrics(metrics.registry, running.profiles, running.ctx.catalog);
  let endpoint: HttpEndpoint | undefined;
  if (config.metricsAddress !== undefined && metrics !== undefined) {
    try {
      endpoint = await startHttpEndpoint(config.metricsAddress, metrics, async () => {
        const problem = await readinessProblem(running.ctx);
        return problem === undefined ? { ready: true, warnings: readinessWarnings(running.ctx) } : { ready: false, message: problem };
      });
      log('info', 'metrics and health endpoint listening', { address: config.metricsAddress, port: endpoint.port });
    } catch (err) {
      process.stderr.write(`lode driver: ${(err as Error).message}\n`);
      await running.stop();
      return 1;
    }
  }
  const http = endpoint;
  return new Promise<number>((resolve) => {
    const shutdown = (signal: string) => {
      log('info', 'stopping', { signal });
      Promise.all([running.stop(), http?.close()]).then(() => resolve(0), () => resolve(1));
    };
    process.once('SIGTERM', () => shutdown('SIGTERM'));
    process.once('SIGINT', () => shutdown('SIGINT'));
  });
}
