// The Node.js flags a driver process runs with, in the image and wherever tests or benchmarks start one.

/**
 * A driver is one small long-lived process per node, so memory matters more than allocation
 * speed: a 1 MiB young generation and a 256 MiB old-space ceiling make V8 collect early.
 * npm run bench (d) measured 77 MiB resident with 1000 volumes on 2026-12-01; a driver started
 * without them grew from 69 to 87 MiB over 200 volumes and 4,000 calls where one with them stayed
 * at 63-71 MiB (VmRSS, same machine, same day).
 * V8 reads these only at start-up, hence flags rather than code: the image sets them as
 * NODE_OPTIONS (a test keeps the Dockerfile equal to this), tests and benchmarks pass them
 * on the command line.
 */
export const DRIVER_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=1', '--max-old-space-size=256'];
