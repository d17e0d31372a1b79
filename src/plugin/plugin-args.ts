// The command line of `kubectl lode`: its subcommand, kubectl's own connection and output flags, and the driver it looks at.

export type Subcommand = 'status' | 'volumes' | 'orphans' | 'why';
export const SUBCOMMANDS: readonly Subcommand[] = ['status', 'volumes', 'orphans', 'why'];

export type OutputFormat = 'table' | 'wide' | 'json' | 'yaml';

export interface PluginArgs {
  command: Subcommand | 'help';
  /** What follows the subcommand (the claim or pod of `why`). */
  operands: string[];
  kubeconfig?: string;
  context?: string;
  namespace?: string;
  output: OutputFormat;
  driverName: string;
  /** Where the driver's DaemonSet runs: its capacity objects and the node-loss Lease live there. */
  driverNamespace: string;
}

/** A command line kubectl would refuse too: the message says what was wrong; exit code 1 as kubectl's. */
export class UsageError extends Error {
  override name = 'UsageError';
}

export const USAGE = `kubectl lode: what the Lode CSI driver's volumes and pools look like, from the Kubernetes API.

Usage:
  kubectl lode status             per node: its pools (backend, size, allocated, free, largest volume, quarantined;
                                  the drivers' metrics read through the pod proxy), the driver's health and
                                  version, lost nodes, warnings
  kubectl lode volumes            every Lode PersistentVolume: node, pool, size, claim, pod, snapshots
  kubectl lode orphans            the driver's volumes no PersistentVolume names (reported by the drivers' orphan check)
  kubectl lode why CLAIM|POD      why a claim or pod is Pending: per node, the first reason it cannot go there
                                  (pod/NAME or pvc/NAME to say which; a plain name is tried as a claim, then a pod)

Flags (as kubectl's):
  --kubeconfig PATH               the kubeconfig to use (else $KUBECONFIG, else ~/.kube/config)
  --context NAME                  the kubeconfig context to use
  -n, --namespace NAME            the namespace of the claim or pod (why); default: the context's
  -o, --output FORMAT             wide, json or yaml
  --driver-name NAME              the CSI driver's name (default lode.csi.dev)
  --driver-namespace NAME         the driver's namespace (default lode-system): its pods, the node-loss Lease
  -h, --help                      this text
`;

const OUTPUTS: Record<string, OutputFormat> = { wide: 'wide', json: 'json', yaml: 'yaml' };

/** Flags that take a value, by every spelling, and the field each sets. */
const VALUE_FLAGS: Record<string, 'kubeconfig' | 'context' | 'namespace' | 'output' | 'driverName' | 'driverNamespace'> = {
  '--kubeconfig': 'kubeconfig', '--context': 'context', '-n': 'namespace', '--namespace': 'namespace',
  '-o': 'output', '--output': 'output', '--driver-name': 'driverName', '--driver-namespace': 'driverNamespace',
};

/** Reads argv (without node and the script); flags may come before or after the subcommand, as kubectl takes them. */
export function parseArgs(argv: readonly string[]): PluginArgs {
  const values: Partial<Record<(typeof VALUE_FLAGS)[string], string>> = {};
  const positional: string[] = [];
  let help = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '-h' || arg === '--help') { help = true; continue; }
    if (arg === '--') { positional.push(...argv.slice(i + 1)); break; }
    // --flag=value and -nvalue / -ojson, as kubectl's flag library takes them.
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const name = eq > 0 ? arg.slice(0, eq) : /^-[no]./.test(arg) ? arg.slice(0, 2) : arg;
    const field = VALUE_FLAGS[name];
    if (field !== undefined) {
      let value: string | undefined;
      if (eq > 0) value = arg.slice(eq + 1);
      else if (name !== arg) value = arg.slice(2).replace(/^=/, '');
      else { value = argv[i + 1]; i++; }
      if (value === undefined || value === '') throw new UsageError(`flag needs an argument: ${name}`);
      values[field] = value;
      continue;
    }
    if (arg.startsWith('-') && arg !== '-') throw new UsageError(`unknown flag: ${arg}`);
    positional.push(arg);
  }
  const [first, ...operands] = positional;
  let output: OutputFormat = 'table';
  if (values.output !== undefined) {
    const o = OUTPUTS[values.output];
    if (o === undefined) throw new UsageError(`unable to match a printer suitable for the output format "${values.output}", allowed formats are: json, wide, yaml`);
    output = o;
  }
  const common = {
    operands, output,
    driverName: values.driverName ?? 'lode.csi.dev',
    driverNamespace: values.driverNamespace ?? 'lode-system',
    ...(values.kubeconfig !== undefined ? { kubeconfig: values.kubeconfig } : {}),
    ...(values.context !== undefined ? { context: values.context } : {}),
    ...(values.namespace !== undefined ? { namespace: values.namespace } : {}),
  };
  if (help || first === undefined || first === 'help') return { command: 'help', ...common };
  if (!(SUBCOMMANDS as readonly string[]).includes(first)) throw new UsageError(`unknown command "${first}" for "kubectl lode" (commands: ${SUBCOMMANDS.join(', ')})`);
  const command = first as Subcommand;
  if (command === 'why' && operands.length !== 1) throw new UsageError('why takes one claim or pod: kubectl lode why CLAIM|pod/NAME|pvc/NAME');
  if (command !== 'why' && operands.length > 0) throw new UsageError(`${command} takes no arguments, got: ${operands.join(' ')}`);
  return { command, ...common };
}
