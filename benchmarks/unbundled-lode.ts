// `lode driver` as it ran before the build bundled it: the driver command from its compiled modules, loaded one by one (driver-bench.ts compares the starts).
import { runDriverCommand } from '../src/cli/driver-command.js';

const [command, ...rest] = process.argv.slice(2);
if (command !== 'driver') throw new Error(`unbundled-lode runs only "driver", not ${JSON.stringify(command)}`);
process.exitCode = await runDriverCommand(rest);
