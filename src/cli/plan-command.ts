// `lode plan`: how many nodes of each group the workloads need, which pods fit nowhere and why, and the capacity left, from manifests and node-group templates, with no cluster and no driver.
import { parseArgs } from 'node:util';
import { ManifestError } from '../bench/manifests/load-manifests.js';
import { isScoring, SCORINGS, type Scoring } from '../bench/controllers/scheduler/capacity-scoring.js';
import { readNodeTemplate } from '../plan/node-template.js';
import { plan, type NodeGroupSpec } from '../plan/planner.js';
import { planReport, renderPlan } from '../plan/plan-report.js';
import { readWorkloads } from '../plan/workloads.js';

/** Where --verify's drivers keep their pools, as the bench's (lode bench --work-dir). */
const DEFAULT_WORK_ROOT = '/var/lib/lode/bench';

const USAGE = `usage: lode plan MANIFEST... --node-group NAME=TEMPLATE.yaml[,max=N] ... [flags]

MANIFEST is a YAML file or a directory of them: Pods, StatefulSets, Deployments, PVCs, PVs,
StorageClasses (Lode's are deploy/base/storageclasses.yaml), CSIDrivers; other kinds are read past.
TEMPLATE.yaml is a Node and a NodePools document listing its pools in the driver's --pool syntax
(docs/plan.md). Pods are placed in manifest order; a pod no node can take adds a node of the first
group (in flag order) that can.

  --node-group NAME=FILE[,max=N]  a node group (repeatable); max caps its nodes
  --scoring S        StorageCapacityScoring shape: spread (the upstream default: most free capacity
                     wins), pack (the reversed shape), none (the feature gate off). Default spread
  -o, --output F     table (default) or json
  --verify           also run a sample of the plan (the first --verify-nodes nodes of each group and
                     their pods) through the bench with real drivers, and report any difference (root)
  --verify-nodes N   nodes per group in the sample (default 2)
  --work-dir DIR     where --verify's drivers keep their pools (default /var/lib/lode/bench)
  -h, --help         this text

Exit status: 0 when the plan was made (pods that fit nowhere are part of the answer), 1 on bad input
or when --verify found a difference.
`;

/** NAME=FILE[,max=N]. */
function parseGroupFlag(value: string): { name: string; file: string; max: number | undefined } {
  const eq = value.indexOf('=');
  if (eq <= 0) throw new Error(`--node-group "${value}": expected NAME=TEMPLATE.yaml[,max=N]`);
  const name = value.slice(0, eq);
  if (!/^[a-z0-9]([-a-z0-9]{0,40}[a-z0-9])?$/.test(name)) throw new Error(`--node-group "${value}": the group's name "${name}" must be a DNS label of at most 42 characters (its nodes are named NAME-1, NAME-2, ...)`);
  const [file = '', ...opts] = value.slice(eq + 1).split(',');
  if (file === '') throw new Error(`--node-group "${value}": no template file given`);
  let max: number | undefined;
  for (const opt of opts) {
    const [key, v = ''] = opt.split('=', 2);
    if (key !== 'max') throw new Error(`--node-group "${value}": unknown option "${key}" (known: max)`);
    const n = Number(v);
    if (v.trim() === '' || !Number.isInteger(n) || n < 0) throw new Error(`--node-group "${value}": max must be a whole number of nodes, not "${v}"`);
    max = n;
  }
  return { name, file, max };
}

export async function runPlanCommand(argv: string[]): Promise<number> {
  const fail = (message: string): number => {
    process.stderr.write(`error: ${message}\n`);
    return 1;
  };
  let values;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: argv,
      options: {
        'node-group': { type: 'string', multiple: true }, scoring: { type: 'string' }, output: { type: 'string', short: 'o' }, help: { type: 'boolean', short: 'h' },
        verify: { type: 'boolean' }, 'verify-nodes': { type: 'string' }, 'work-dir': { type: 'string' },
      },
      allowPositionals: true,
    }));
  } catch (err) {
    return fail(`${(err as Error).message}\n\n${USAGE}`);
  }
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const output = values.output ?? 'table';
  if (output !== 'table' && output !== 'json') return fail(`--output must be table or json, not "${output}"`);
  const scoringFlag = values.scoring ?? 'spread';
  if (!isScoring(scoringFlag)) return fail(`--scoring must be one of ${SCORINGS.join(', ')}, not "${scoringFlag}"`);
  const scoring: Scoring = scoringFlag;
  const verifyNodes = Number(values['verify-nodes'] ?? '2');
  if (!Number.isInteger(verifyNodes) || verifyNodes < 1) return fail(`--verify-nodes must be a whole number of nodes, at least 1, not "${values['verify-nodes']}"`);
  if (values.verify && typeof process.getuid === 'function' && process.getuid() !== 0) {
    return fail('--verify needs root: each sample node runs a real lode driver that attaches loop devices and mounts filesystems');
  }
  if (positionals.length === 0) return fail(`name at least one manifest file or directory\n\n${USAGE}`);
  const flags = values['node-group'] ?? [];
  if (flags.length === 0) return fail(`give at least one --node-group NAME=TEMPLATE.yaml\n\n${USAGE}`);
  const groups: NodeGroupSpec[] = [];
  try {
    for (const flag of flags) {
      const g = parseGroupFlag(flag);
      if (groups.some((x) => x.name === g.name)) throw new Error(`--node-group: the group "${g.name}" is given twice`);
      groups.push({ name: g.name, file: g.file, template: readNodeTemplate(g.file), ...(g.max !== undefined ? { max: g.max } : {}) });
    }
  } catch (err) {
    // A missing or malformed template, or a malformed flag: both are the caller's to fix.
    return fail((err as Error).message);
  }
  let workloads;
  try {
    workloads = readWorkloads(positionals);
  } catch (err) {
    if (err instanceof ManifestError) return fail(err.problems.join('\n'));
    throw err;
  }
  const outcome = plan(workloads, groups, scoring);
  const report = planReport(outcome, workloads.ignored);
  if (values.verify) {
    // The bench is loaded only here: its modules are many, and a plan without --verify needs none of them.
    const { verifyPlan } = await import('../plan/plan-verify.js');
    try {
      report.verify = await verifyPlan(outcome, workloads, readWorkloads(positionals), { perGroup: verifyNodes, workRoot: values['work-dir'] ?? DEFAULT_WORK_ROOT });
    } catch (err) {
      return fail((err as Error).message);
    }
  }
  process.stdout.write(output === 'json' ? JSON.stringify(report, null, 2) + '\n' : renderPlan(report));
  return report.verify !== undefined && report.verify.differences.length > 0 ? 1 : 0;
}
