#!/usr/bin/env node
// `kubectl lode`: the kubectl plugin's entry point; kubectl runs it as kubectl-lode with the arguments after "lode".
import { parseArgs, USAGE, UsageError, type PluginArgs } from './plugin-args.js';
import { ClusterError, PluginCluster } from './plugin-cluster.js';
import { runCommand } from './commands.js';

async function main(argv: readonly string[]): Promise<number> {
  let args: PluginArgs;
  try {
    args = parseArgs(argv);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`error: ${err.message}\nSee 'kubectl lode --help' for usage.\n`);
    return 1;
  }
  if (args.command === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  try {
    const cluster = await PluginCluster.connect(args);
    const out = await runCommand(args, args.command, cluster, process.stdout);
    process.stdout.write(out);
    return 0;
  } catch (err) {
    // As kubectl: one "error: ..." line on stderr and exit code 1.
    if (err instanceof ClusterError || err instanceof UsageError) {
      process.stderr.write(`error: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
}

main(process.argv.slice(2)).then((code) => { process.exitCode = code; }, (err: unknown) => {
  process.stderr.write(`error: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  process.exitCode = 1;
});
