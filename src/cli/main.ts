#!/usr/bin/env node
// The `lode` command: dispatches to the node driver, the cluster bench and the demo.
// The commands are imported when named, not here: the bench's modules (the API client library
// among them) are about four times the driver's, and every driver start would read them all.
import { packageVersion } from '../util/version.js';

const USAGE = `usage: lode <command> [flags]

commands:
  driver   run one node's CSI driver (Identity, Controller, Node) on a unix socket
  bench    run a cluster-bench scenario: the Kubernetes storage control plane on one machine
  demo     run the default multi-node scenario and print a summary
  plan     how many nodes of each group workloads need, and which pods fit nowhere (no cluster)

Run "lode <command> --help" for the flags of a command, "lode --version" for the version.`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'driver': {
      // The build's one-file bundle of ./driver-command.js (scripts/bundle-driver.mjs) with its
      // code cache: loading the driver's modules one by one, then compiling them, was most of a
      // driver start.
      const { driver, codeCache } = (await import('./driver-bundle-loader.js')).loadDriverBundle();
      return driver.runDriverCommand(rest, { codeCache });
    }
    case 'bench':
      return (await import('./bench-command.js')).runBenchCommand(rest);
    case 'demo':
      return (await import('./bench-command.js')).runBenchCommand(['--demo', ...rest]);
    case 'plan':
      return (await import('./plan-command.js')).runPlanCommand(rest);
    case '--version':
    case 'version':
      process.stdout.write(`lode ${packageVersion()}\n`);
      return 0;
    case undefined:
    case '-h':
    case '--help':
    case 'help':
      process.stdout.write(USAGE + '\n');
      return command === undefined ? 2 : 0;
    default:
      process.stderr.write(`lode: unknown command "${command}"\n\n${USAGE}\n`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => { process.exitCode = code; },
  (err: unknown) => {
    process.stderr.write(`lode: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
