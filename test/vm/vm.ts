// Boots a throw-away VM with Debian's kernel (software emulation), the host root shared read-only over
// 9p and tmpfs for /tmp and /run (a checkout there travels as its own read-only share), runs node:test
// files inside it and brings their results back.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, writeFileSync, mkdirSync, existsSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseGuestResults, type GuestTestResult } from './guest-reporter.js';
import { GUEST_JOB_SCRIPT, HOST_ROOT_TAG, JOB_TAG, BOOT_FAILED_MARKER, buildInitramfs } from './initramfs.js';
import { MARK, jobScript } from './guest-job.js';
import { extraShares, type ExtraShare } from './checkout-shares.js';
import { SLOWDOWN_MARK, hostFileWaitMs, guestFileSeconds } from './slowdown.js';
import { which, type VmHost } from './prerequisites.js';

export interface GuestFileResult {
  /** The path as given. */
  file: string;
  /** node --test's exit code in the guest; undefined when the file did not finish. */
  exitCode?: number;
  tests: GuestTestResult[];
  /** Why the file's result is incomplete (did not finish, no results written), if it is. */
  problem?: string;
  /** What the guest printed on the console while this file ran. */
  console: string;
  durationMs: number;
}

export interface VmRun {
  files: GuestFileResult[];
  /** From starting qemu to the guest's job script running. */
  bootMs: number;
  /** How many times slower than the reference the guest measured itself at boot (test/vm/slowdown.ts). */
  slowdown: number;
  /** The guest's timed loop, in ms (the slowdown is this over the reference). */
  speedLoopMs: number;
  /** Host directories under /tmp or /run the guest got as their own shares. */
  extraShares: ExtraShare[];
  console: string;
}

export interface VmOptions {
  host: VmHost;
  memoryMiB?: number;
  cpus?: number;
  bootTimeoutMs?: number;
  /**
   * Each file's bound inside the guest at the reference speed; the guest stretches it by the slowdown
   * it measures at boot, and the host adds a margin and then gives up on the VM.
   */
  fileTimeoutMs?: number;
  /** Loaded in the guest before the tests; built-in ones are fine to name. */
  modules?: readonly string[];
  env?: Readonly<Record<string, string>>;
  /** The guest's working directory (the host's, seen through the read-only share). */
  cwd?: string;
  /** Receives the guest console as it arrives. */
  onConsole?: (text: string) => void;
}

/** The VM did not reach the job script: the message says why, with qemu's and the console's last words. */
export class VmBootError extends Error {
  override name = 'VmBootError';
}

// btrfs is left out: loading it benchmarks the RAID6 routines, seconds under emulation, and the host
// kernel has btrfs anyway.
export const DEFAULT_GUEST_MODULES = ['loop', 'ext4', 'xfs', 'dm_mod', 'dm_thin_pool', 'dm_snapshot', 'quota_v2'];

const TAIL = 4000;
const bootFailure = new RegExp(`${BOOT_FAILED_MARKER}: ([^@]*)@@`);
const KEEP_CONSOLE = 2_000_000;

function tail(s: string, n = TAIL): string {
  return s.length > n ? `...${s.slice(-n)}` : s;
}

const reporterPath = fileURLToPath(new URL('./guest-reporter.js', import.meta.url));
/** The checkout this harness runs from (dist/test/vm/ is three levels down): the guest loads its reporter and helpers. */
const harnessCheckout = path.resolve(path.dirname(reporterPath), '../../..');

export function qemuArgs(host: VmHost, initrd: string, shareDir: string, memoryMiB: number, cpus: number, shares: readonly ExtraShare[] = []): string[] {
  return [
    '-accel', 'tcg',
    '-cpu', 'max',
    '-m', String(memoryMiB),
    '-smp', String(cpus),
    '-nodefaults', '-nographic', '-no-reboot',
    '-serial', 'stdio',
    '-kernel', host.kernel,
    '-initrd', initrd,
    // loglevel=3 keeps the kernel's error chatter (a loop device on tmpfs refusing WRITE_ZEROES) off the
    // console but lets panics through.
    '-append', 'console=ttyS0 panic=-1 loglevel=3',
    '-virtfs', `local,path=/,mount_tag=${HOST_ROOT_TAG},security_model=none,readonly=on,multidevs=remap`,
    '-virtfs', `local,path=${shareDir},mount_tag=${JOB_TAG},security_model=none`,
    // qemu reads a doubled comma as one inside an option's value.
    ...shares.flatMap((s) => ['-virtfs', `local,path=${s.dir.replace(/,/g, ',,')},mount_tag=${s.tag},security_model=none,readonly=on,multidevs=remap`]),
  ];
}

// Watches the console and the process; every wait has a deadline.
class Qemu {
  /** The console's last KEEP_CONSOLE characters; `dropped` counts those before them. */
  console = '';
  dropped = 0;
  stderr = '';
  exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  private waiters = new Set<() => void>();
  private readonly killOnExit = (): void => { this.kill(); };

  constructor(readonly proc: ChildProcess, onConsole?: (text: string) => void) {
    proc.stdout?.setEncoding('utf8');
    proc.stderr?.setEncoding('utf8');
    proc.stdout?.on('data', (chunk: string) => {
      const all = this.console + chunk;
      const cut = Math.max(0, all.length - KEEP_CONSOLE);
      this.console = all.slice(cut);
      this.dropped += cut;
      onConsole?.(chunk);
      this.wake();
    });
    proc.stderr?.on('data', (chunk: string) => {
      this.stderr = (this.stderr + chunk).slice(-KEEP_CONSOLE);
    });
    proc.on('exit', (code, signal) => {
      this.exited = { code, signal };
      process.off('exit', this.killOnExit);
      this.wake();
    });
    proc.on('error', (err) => {
      this.stderr += `\n${err.message}`;
      this.exited ??= { code: null, signal: null };
      this.wake();
    });
    // A host test process that dies must not leave an emulator running behind it.
    process.on('exit', this.killOnExit);
  }

  private wake(): void {
    for (const w of [...this.waiters]) w();
  }

  /** Resolves 'ok' once `ready()` holds, 'exited' if qemu is gone first, 'timeout' at the deadline. */
  waitFor(ready: () => boolean, timeoutMs: number): Promise<'ok' | 'exited' | 'timeout'> {
    return new Promise((resolve) => {
      const check = (): void => {
        let r: 'ok' | 'exited' | undefined;
        if (ready()) r = 'ok';
        else if (this.exited) r = 'exited';
        if (r) finish(r);
      };
      const finish = (r: 'ok' | 'exited' | 'timeout'): void => {
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve(r);
      };
      const timer = setTimeout(() => finish('timeout'), timeoutMs);
      this.waiters.add(check);
      check();
    });
  }

  /** The first match of `re` at or after absolute console position `from`, with absolute positions. */
  find(re: RegExp, from: number): { start: number; end: number; match: RegExpExecArray } | undefined {
    const local = Math.max(0, from - this.dropped);
    const m = re.exec(this.console.slice(local));
    if (!m) return undefined;
    const start = this.dropped + local + m.index;
    return { start, end: start + m[0].length, match: m };
  }

  text(from: number, to?: number): string {
    return this.console.slice(Math.max(0, from - this.dropped), to === undefined ? undefined : Math.max(0, to - this.dropped));
  }

  kill(): void {
    if (!this.exited) this.proc.kill('SIGKILL');
  }

  describeExit(): string {
    if (!this.exited) return 'still running';
    return this.exited.signal ? `killed by ${this.exited.signal}` : `exited with code ${this.exited.code}`;
  }
}

function readResults(file: string): GuestTestResult[] {
  if (!existsSync(file)) return [];
  return parseGuestResults(readFileSync(file, 'utf8'));
}

const OWNER_FILE = 'owner.pid';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

// A host process killed outright (SIGKILL, a test runner's timeout) cannot remove its share and
// initramfs; the next run removes those whose recorded owner is gone, and nothing without that record.
function removeStaleShares(tmp: string): void {
  for (const name of readdirSync(tmp)) {
    if (!/^lode-vm-[A-Za-z0-9]{6}$/.test(name)) continue;
    const dir = path.join(tmp, name);
    let owner: number;
    try {
      owner = Number.parseInt(readFileSync(path.join(dir, OWNER_FILE), 'utf8'), 10);
    } catch {
      continue;
    }
    if (!Number.isInteger(owner) || owner <= 0 || alive(owner)) continue;
    rmSync(dir, { recursive: true, force: true });
    rmSync(`${dir}.initrd`, { force: true });
  }
}

// CI, and the crash-slice choice (test/conformance/crash-slice.ts), reach the guest's tests unchanged.
// LODE_CSI_TOOLS too, where the upstream tools are not beside the checkout (a clone elsewhere).
const PASSED_ENV = ['CI', 'LODE_CRASH_POINTS', 'LODE_CRASH_SEED', 'LODE_CSI_TOOLS'];

function passedThrough(): Record<string, string> {
  return Object.fromEntries(PASSED_ENV.flatMap((k) => (process.env[k] ? [[k, process.env[k] as string]] : [])));
}

/**
 * Where a checkout's packages really are: a clone may link its node_modules to another
 * checkout's (test/vm/any-path.test.ts does), and when that one lies under /tmp too the guest
 * sees the link but not what it points to.
 */
function packagesOf(checkout: string): string[] {
  try {
    return [realpathSync(path.join(checkout, 'node_modules'))];
  } catch {
    return [];
  }
}

/** Boots one VM, runs `files` (paths the guest can read, i.e. on the host root) one after another, powers off. */
export async function runInVm(files: readonly string[], opts: VmOptions): Promise<VmRun> {
  const memoryMiB = opts.memoryMiB ?? 2048;
  const cpus = opts.cpus ?? 2;
  const bootTimeoutMs = opts.bootTimeoutMs ?? 120_000;
  const fileTimeoutMs = opts.fileTimeoutMs ?? 300_000;
  const cwd = opts.cwd ?? process.cwd();
  const absFiles = files.map((f) => path.resolve(cwd, f));
  const passed = { ...passedThrough(), ...opts.env };
  // Everything the guest reads from a checkout or tool directory that its own /tmp or /run would hide.
  const shares = extraShares([
    cwd,
    harnessCheckout,
    ...packagesOf(cwd),
    ...packagesOf(harnessCheckout),
    ...absFiles.map((f) => path.dirname(f)),
    ...(passed.LODE_CSI_TOOLS ? [path.resolve(passed.LODE_CSI_TOOLS)] : []),
  ]);

  removeStaleShares(os.tmpdir());
  const shareDir = mkdtempSync(path.join(os.tmpdir(), 'lode-vm-'));
  writeFileSync(path.join(shareDir, OWNER_FILE), String(process.pid));
  const resultsDir = path.join(shareDir, 'results');
  const initrd = path.join(os.tmpdir(), `${path.basename(shareDir)}.initrd`);
  let qemu: Qemu | undefined;
  try {
    writeFileSync(initrd, buildInitramfs(opts.host.busybox, opts.host.modulesDir, shares));
    mkdirSync(resultsDir);
    writeFileSync(
      path.join(shareDir, path.basename(GUEST_JOB_SCRIPT)),
      jobScript({
        files: absFiles,
        cwd,
        reporter: reporterPath,
        modules: opts.modules ?? DEFAULT_GUEST_MODULES,
        env: { LODE_VM_GUEST: '1', ...passed },
        fileTimeoutSeconds: Math.ceil(fileTimeoutMs / 1000),
      }),
      { mode: 0o755 },
    );

    const started = Date.now();
    const args = qemuArgs(opts.host, initrd, shareDir, memoryMiB, cpus, shares);
    // A host test killed by a signal runs no exit handler; the parent-death signal still takes qemu
    // down with it (setpriv execs qemu, so the pid is qemu's).
    const setpriv = which('setpriv');
    const proc = setpriv
      ? spawn(setpriv, ['--pdeathsig', 'KILL', '--', opts.host.qemu, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
      : spawn(opts.host.qemu, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const q = new Qemu(proc, opts.onConsole);
    qemu = q;

    // The whole failure line, not just its start: the reason may arrive in a later chunk.
    const initFailure = (): string | undefined => bootFailure.exec(q.console)?.[1];
    const boot = await q.waitFor(() => q.console.includes(MARK.userspace) || initFailure() !== undefined, bootTimeoutMs);
    if (boot !== 'ok' || !q.console.includes(MARK.userspace)) {
      const why =
        initFailure() ??
        (boot === 'timeout' ? `did not reach the job script within ${bootTimeoutMs / 1000} s` : `qemu ${q.describeExit()} before the job script ran`);
      throw new VmBootError(
        `the test VM did not boot: ${why} (kernel ${opts.host.kernel})\n` +
          `--- qemu stderr (tail) ---\n${tail(q.stderr.trim()) || '(empty)'}\n--- console (tail) ---\n${tail(q.console.trim()) || '(empty)'}`,
      );
    }
    const bootMs = Date.now() - started;
    // The guest times its loop right after the userspace marker; a boot step, so under the boot's bound.
    const measured = await q.waitFor(() => q.find(SLOWDOWN_MARK, 0) !== undefined, bootTimeoutMs);
    const speed = q.find(SLOWDOWN_MARK, 0);
    if (measured !== 'ok' || !speed) {
      throw new VmBootError(
        `the test VM did not report its speed: ${measured === 'timeout' ? `no "slowdown" line within ${bootTimeoutMs / 1000} s` : `qemu ${q.describeExit()}`}\n` +
          `--- console (tail) ---\n${tail(q.console.trim()) || '(empty)'}`,
      );
    }
    const permille = Number(speed.match[2]);
    const fileWaitMs = hostFileWaitMs(fileTimeoutMs, permille);
    const guestFileS = guestFileSeconds(Math.ceil(fileTimeoutMs / 1000), permille);

    const results: GuestFileResult[] = [];
    let gaveUp: string | undefined;
    // Where the previous file's end marker ended: a quick file's markers may already be past it.
    let cursor = q.find(new RegExp(MARK.userspace), 0)?.end ?? 0;
    for (const [i, file] of files.entries()) {
      if (gaveUp) {
        results.push({ file, tests: [], problem: gaveUp, console: '', durationMs: 0 });
        continue;
      }
      const t0 = Date.now();
      const endRe = MARK.end(i);
      // The guest's own timeout fires first; the margin covers its kill grace and a slow start.
      const r = await q.waitFor(() => q.find(endRe, cursor) !== undefined, fileWaitMs);
      const end = q.find(endRe, cursor);
      const begin = q.find(new RegExp(MARK.start(i)), cursor);
      const consoleText = q.text(begin?.end ?? cursor, end?.start).trim();
      const rc = end?.match[1];
      let problem: string | undefined;
      if (r !== 'ok' || !end) {
        problem = r === 'timeout'
          ? `the VM stopped answering while ${file} ran (no end marker within ${fileWaitMs / 1000} s); it was killed`
          : `qemu ${q.describeExit()} while ${file} ran`;
        gaveUp = `not run: ${problem}`;
        q.kill();
      } else {
        cursor = end.end;
        if (rc === '124' || rc === '137') problem = `${file} did not finish within ${guestFileS} s in the guest and was killed`;
      }
      const tests = readResults(path.join(resultsDir, `${i}.jsonl`));
      results.push({ file, exitCode: rc === undefined ? undefined : Number(rc), tests, problem, console: consoleText, durationMs: Date.now() - t0 });
    }
    if (!gaveUp && (await q.waitFor(() => false, 30_000)) === 'timeout') q.kill();
    return { files: results, bootMs, slowdown: permille / 1000, speedLoopMs: Number(speed.match[1]), extraShares: shares, console: q.console };
  } finally {
    qemu?.kill();
    if (qemu && !qemu.exited) await qemu.waitFor(() => false, 10_000);
    rmSync(shareDir, { recursive: true, force: true });
    rmSync(initrd, { force: true });
  }
}
