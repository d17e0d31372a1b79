// Host side of the VM tests: one node:test test per guest file, each guest test mirrored as a subtest
// that passes, fails (with the guest's error) or skips as it did inside the VM. One boot serves all files.
import { test, type TestContext } from 'node:test';
import * as path from 'node:path';
import type { GuestTestResult } from './guest-reporter.js';
import { checkPrerequisites, describeMissing, type Tool } from './prerequisites.js';
import { guestCost } from './guest-costs.js';
import { runInVm, type GuestFileResult, type VmOptions, type VmRun } from './vm.js';

/** Tools the storage tests run in the guest, by the Debian package that has them. */
export const STORAGE_TOOLS: readonly Tool[] = [
  { command: 'losetup', pkg: 'util-linux' },
  { command: 'mkfs.ext4', pkg: 'e2fsprogs' },
  { command: 'mkfs.xfs', pkg: 'xfsprogs' },
  { command: 'xfs_quota', pkg: 'xfsprogs' },
  { command: 'setquota', pkg: 'quota' },
  { command: 'lvcreate', pkg: 'lvm2' },
  { command: 'thin_check', pkg: 'thin-provisioning-tools' },
  { command: 'setpriv', pkg: 'util-linux' },
];

export function underCi(): boolean {
  const ci = process.env.CI;
  return ci !== undefined && ci !== '' && ci !== 'false' && ci !== '0';
}

interface Node {
  result: GuestTestResult;
  children: Node[];
}

// node:test reports a test after its subtests, so a test at nesting n adopts the nesting n+1 tests
// reported since the previous test at its level or above.
export function resultTree(results: readonly GuestTestResult[]): Node[] {
  const pending = new Map<number, Node[]>();
  for (const result of results) {
    const children = pending.get(result.nesting + 1) ?? [];
    pending.delete(result.nesting + 1);
    const level = pending.get(result.nesting) ?? [];
    level.push({ result, children });
    pending.set(result.nesting, level);
  }
  return pending.get(0) ?? [];
}

/** An error that shows the guest's rendering, not a host stack that says nothing. */
export class GuestFailure extends Error {
  override name = 'GuestFailure';
  constructor(message: string) {
    super(message);
    // Without frames of its own: the message already holds the guest stack.
    this.stack = `${this.name}: ${message}`;
  }
}

function failed(n: Node): boolean {
  return n.result.outcome === 'fail' || n.children.some(failed);
}

async function mirror(t: TestContext, node: Node): Promise<void> {
  const r = node.result;
  await t.test(r.name, async (st) => {
    if (r.outcome === 'skip') return st.skip(r.message ?? 'skipped in the guest');
    if (r.outcome === 'todo') return st.todo(r.message ?? 'todo in the guest');
    // The host's own duration is the mirroring's; what a case costs under emulation is the guest's.
    st.diagnostic(`took ${(r.durationMs / 1000).toFixed(1)} s in the guest`);
    for (const d of r.diagnostics ?? []) st.diagnostic(d);
    for (const c of node.children) await mirror(st, c);
    // A parent whose children failed is failed by them already, with their details.
    if (r.outcome === 'fail' && !node.children.some(failed)) throw new GuestFailure(r.message ?? 'failed in the guest');
  });
}

/** Turns one guest file's outcome into the host test `t`: subtests per guest test, plus file-level problems. */
export async function reportGuestFile(t: TestContext, f: GuestFileResult): Promise<void> {
  const roots = resultTree(f.tests);
  for (const n of roots) await mirror(t, n);
  const consoleTail = f.console.length > 3000 ? `...${f.console.slice(-3000)}` : f.console;
  if (f.problem) throw new GuestFailure(`${f.problem}\n--- guest console ---\n${consoleTail}`);
  if (roots.length === 0) throw new GuestFailure(`${f.file} ran no test in the guest (exit code ${f.exitCode})\n--- guest console ---\n${consoleTail}`);
  if (f.exitCode !== 0 && !roots.some(failed)) {
    throw new GuestFailure(`node --test exited with ${f.exitCode} in the guest although no test failed\n--- guest console ---\n${consoleTail}`);
  }
}

export interface VmSuiteOptions extends Omit<VmOptions, 'host'> {
  tools?: readonly Tool[];
  /** VMs booted at once, sharing the files by their expected guest time (default: LODE_VM_PARALLEL, else 2). */
  parallel?: number;
}

/**
 * How many VMs run side by side. A guest under software emulation keeps about one host core
 * busy (its tests run one at a time), so on a 2-core machine two VMs take the VM files in
 * about half the time; LODE_VM_PARALLEL=1 runs them all in one boot.
 */
export function vmParallelism(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.LODE_VM_PARALLEL;
  if (raw === undefined || raw === '') return 2;
  if (!/^[1-8]$/.test(raw)) throw new Error(`LODE_VM_PARALLEL="${raw}" must be a whole number from 1 to 8`);
  return Number(raw);
}

/**
 * Shares `files` among `n` VMs so their expected guest times come out even: longest first, each
 * to the VM with the least so far (the VMs run side by side, so the slowest one is the wait).
 * Returns, per file in the order given, its VM and its place in that VM's list.
 */
export function dealFiles(files: readonly string[], n: number, cost: (file: string) => number = guestCost): { groups: string[][]; place: Array<{ vm: number; index: number }> } {
  const count = Math.max(1, Math.min(n, files.length));
  const load = new Array<number>(count).fill(0);
  const vmOf = new Map<number, number>();
  const order = files.map((f, i) => ({ i, c: cost(f) })).sort((a, b) => b.c - a.c || a.i - b.i);
  for (const { i, c } of order) {
    const vm = load.indexOf(Math.min(...load));
    vmOf.set(i, vm);
    load[vm] = (load[vm] ?? 0) + c;
  }
  const groups: string[][] = Array.from({ length: count }, () => []);
  // Within a VM the files keep the order given, so its log reads in the same order as the tests.
  const place = files.map((f, i) => {
    const vm = vmOf.get(i) ?? 0;
    groups[vm]!.push(f);
    return { vm, index: groups[vm]!.length - 1 };
  });
  return { groups, place };
}

/**
 * Declares one host test per guest file. Without qemu or the kernel: skipped with what to install,
 * except under CI, where a missing prerequisite is a failure.
 */
export function vmTestFiles(files: readonly string[], opts: VmSuiteOptions = {}): void {
  const pre = checkPrerequisites(opts.tools ?? STORAGE_TOOLS);
  const skip = !pre.ok && !underCi() ? describeMissing(pre) : false;
  const { groups, place } = dealFiles(files, opts.parallel ?? vmParallelism());
  // Two guests share the host's cores, so a file may take longer than alone; the bound is
  // there to catch a hang, not to time a file. The longest file (csi-sanity's lvm-thick
  // controller and snapshot specs) took 286-404 s in full runs on the 2-core machine, and once
  // passed 433 s (420 s stretched by a slowdown measured at boot, before other work loaded the
  // host): the bound sits well clear of that.
  const fileTimeoutMs = opts.fileTimeoutMs ?? (groups.length > 1 ? 900_000 : undefined);
  let runs: Promise<VmRun>[] | undefined;
  const cwd = opts.cwd ?? process.cwd();
  for (const [i, file] of files.entries()) {
    const { vm: g, index: j } = place[i]!;
    test(`in the VM: ${path.relative(cwd, path.resolve(cwd, file))}`, { skip }, async (t) => {
      if (!pre.ok) throw new Error(describeMissing(pre));
      // Every VM boots with the first test, so they run side by side while the tests report in order.
      if (runs === undefined) {
        runs = groups.map((group) => runInVm(group, { ...opts, host: pre.host, ...(fileTimeoutMs !== undefined ? { fileTimeoutMs } : {}) }));
        // A VM that fails while another's files report is awaited by its own files' tests later.
        for (const r of runs) r.catch(() => undefined);
      }
      const vm = await runs[g]!;
      if (j === 0) t.diagnostic(`VM ${g + 1} of ${groups.length} booted in ${(vm.bootMs / 1000).toFixed(1)} s, slowdown ${vm.slowdown.toFixed(2)} (its speed loop took ${vm.speedLoopMs} ms; its bounds stretch by that)`);
      if (j === 0 && vm.extraShares.length > 0) t.diagnostic(`shared on their own, hidden by the guest's /tmp or /run: ${vm.extraShares.map((s) => s.dir).join(', ')}`);
      const f = vm.files[j];
      if (!f) throw new Error(`no result for ${file}`);
      t.diagnostic(`${file} took ${(f.durationMs / 1000).toFixed(1)} s in the guest`);
      await reportGuestFile(t, f);
    });
  }
}
