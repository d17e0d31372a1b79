// The one way Lode runs a system tool (argument arrays, C locale, a timeout and the call's deadline, dying with the driver, a typed error), and the one place the tool helper is chosen.
import { spawn } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import * as path from 'node:path';
import { callSignal } from '../util/call-signal.js';
import { log } from '../util/log.js';
import { ToolHelper, type CallEnd, type SystemCall, type ToolEnd, type ToolSink } from './tool-helper.js';

/** A tool that ran and failed, or could not be started. */
export class ExecError extends Error {
  constructor(
    readonly command: string,
    readonly args: readonly string[],
    /** Exit code, or null when the process was killed or never started. */
    readonly exitCode: number | null,
    readonly stderr: string,
    readonly signal: string | null = null,
    /** errno code when spawning failed, e.g. ENOENT for a missing tool. */
    readonly spawnCode?: string,
  ) {
    const how = spawnCode !== undefined ? `could not start (${spawnCode})`
      : signal !== null ? `killed by ${signal}` : `exited with ${exitCode}`;
    const detail = stderr.trim().split('\n').slice(-3).join(' | ');
    super(`${command} ${how}${detail ? `: ${detail}` : ''}`);
    this.name = 'ExecError';
  }
}

export interface ExecOptions {
  /** Kill the tool after this many milliseconds (default 5 minutes: mkfs of a large image is slow). */
  timeoutMs?: number;
  /** Kill the tool when this aborts; without one, the signal of the CSI call being served (see call-signal). */
  signal?: AbortSignal;
}

export interface ExecResult {
  stdout: string;
  stderr: string;
}

/** Why a tool was stopped before it finished, for its ExecError. */
function stopReason(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason.message : 'the call was cancelled';
}

/** Tools started by this process so far, for tests that show a path runs none (or how many). */
let toolsStarted = 0;

/** How many tools this process has started through `run` (a count only: which tools, the debug log says). */
export function toolRunCount(): number {
  return toolsStarted;
}

/** Tools found so far (a tool installed while the driver runs is found on its next call; none moves). */
const found = new Map<string, string>();

/** Where a command named without a directory is found on PATH (an executable file), or undefined. */
function onPath(command: string): string | undefined {
  if (command.includes('/')) return command;
  const known = found.get(command);
  if (known !== undefined) return known;
  for (const dir of (process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin').split(':')) {
    if (dir === '') continue;
    const file = path.join(dir, command);
    try {
      accessSync(file, constants.X_OK);
      if (statSync(file).isFile()) {
        found.set(command, file);
        return file;
      }
    } catch {
      // not here
    }
  }
  return undefined;
}

let setpriv: string | null | undefined;

/**
 * How a tool is started so that it dies with the driver: through util-linux's setpriv, which
 * sets the parent-death signal (SIGKILL) and execs the tool in its place, same pid. Without it a
 * tool of a driver killed mid-call (mkfs, mount, losetup) ran on and acted after the restart, on
 * a device the retried call was using ("Device or resource busy"), or left a second loop device
 * or mount behind: in a container the kernel kills them with it, elsewhere (the bench, a driver
 * run as a service) nothing did. Where setpriv is missing, tools start directly, said once.
 */
function launcher(): string | null {
  if (setpriv === undefined) {
    setpriv = onPath('setpriv') ?? null;
    if (setpriv === null) log('warn', 'setpriv (util-linux) is not installed: the system tools the driver runs may outlive it if it is killed');
  }
  return setpriv;
}

/** The helper that starts tools without forking the driver (see tool-helper), or null: then each tool is spawned directly. */
let helper: ToolHelper | null | undefined;

/**
 * Whether tools go through the helper: unless LODE_TOOL_HELPER=off, wherever perl runs (every
 * Debian system has it). The direct way stays for the rest, and is what the variable picks for
 * comparing the two.
 */
function toolHelper(): ToolHelper | null {
  if (helper === undefined) {
    helper = process.env.LODE_TOOL_HELPER === 'off' ? null : ToolHelper.forThisMachine(onPath('perl'));
    if (helper === null && process.env.LODE_TOOL_HELPER !== 'off') {
      log('info', 'perl is not installed (or this architecture is not known to the tool helper): each system tool is started by forking the driver');
    }
  }
  return helper;
}

/**
 * A system call the tool helper made and the kernel refused: errno's name as `code` (ENOSPC,
 * EOPNOTSUPP, EBUSY...), as a Node.js system error has it, so the errno rules apply alike.
 */
export class SystemCallError extends Error {
  constructor(readonly syscall: SystemCall['name'], readonly code: string, message: string) {
    super(message);
    this.name = 'SystemCallError';
  }
}

/** What a system call acts on, for its messages and the debug log. */
function callSubject(call: SystemCall): string {
  switch (call.name) {
    case 'fallocate':
    case 'loop_attach': return call.file;
    case 'loop_detach': return call.device;
    case 'mount': return `${call.source || call.fsType} on ${call.target}`;
    case 'umount2':
    case 'mount_setattr': return call.target;
  }
}

/**
 * Makes `call` in the tool helper itself, with no process started (see tool-helper). Resolves
 * with its answer ('' for a call that gives none) when done; null, having done nothing, where
 * tools are started directly (no helper, or one that cannot run here), and the caller runs the
 * tool instead. Rejects with SystemCallError when the kernel refused it. Once sent it is not
 * stopped by the call's deadline: the system call is short and ends on its own.
 */
export function callThroughHelper(call: SystemCall, opts: { signal?: AbortSignal } = {}): Promise<string | null> {
  const signal = opts.signal ?? callSignal();
  const subject = callSubject(call);
  if (signal?.aborted) return Promise.reject(Object.assign(new Error(`${call.name} ${subject}: not started: ${stopReason(signal)}`), { code: 'ABORT_ERR' }));
  const via = toolHelper();
  if (via === null) return Promise.resolve(null);
  const started = process.hrtime.bigint();
  return new Promise<string | null>((resolve, reject) => {
    via.call(call, (how: CallEnd) => {
      log('debug', 'system call', { ...call, ms: Number(process.hrtime.bigint() - started) / 1e6, ...(how.kind === 'done' ? {} : { ended: how.kind }), ...(how.kind === 'failed' ? { code: how.code } : {}) });
      if (how.kind === 'done') resolve(how.answer);
      else if (how.kind === 'helper-unusable') {
        helper = null;
        resolve(null);
      } else if (how.kind === 'failed') reject(new SystemCallError(call.name, how.code, `${call.name} ${subject}: ${how.message} (${how.code})`));
      else reject(new Error(`${call.name} ${subject}: ${how.why}; whether it was done is unknown`));
    });
  });
}

/**
 * Makes `call` in the tool helper where the tool doing the same thing would otherwise run:
 * resolves with its answer when done, and null when it was not done, where tools start directly
 * or when the kernel refused it. Then the caller runs the tool for the same thing, whose attempt
 * keeps what such a call did and said before: its exit status, its message and its own
 * fallbacks. A refusal is rare, so the tool's second attempt costs only then. A cancelled call or
 * a lost helper still fails here: whether a lost call was made is unknown.
 */
export async function callUnlessRefused(call: SystemCall): Promise<string | null> {
  try {
    return await callThroughHelper(call);
  } catch (err) {
    if (!(err instanceof SystemCallError)) throw err;
    log('debug', `the kernel refused ${call.name} (${err.code}); the tool makes the same call`, { subject: callSubject(call) });
    return null;
  }
}

/** A started tool: how to kill it (its whole process group). */
interface Started {
  kill(): void;
}

/** Starts `file` through the helper, or directly through setpriv (see launcher), telling `sink` what it hears. */
function launch(command: string, file: string, args: readonly string[], sink: ToolSink): Started {
  const via = toolHelper();
  if (via !== null) {
    let direct: Started | undefined;
    let killed = false;
    const id = via.start(file, [file, ...args], {
      ...sink,
      end: (how) => {
        if (how.kind !== 'helper-unusable') return sink.end(how);
        helper = null;
        // The tool never started: start it the other way (as every later one), unless it was stopped meanwhile.
        if (killed) return sink.end(how);
        direct = launchDirectly(command, file, args, sink);
      },
    });
    return {
      kill: () => {
        killed = true;
        if (direct !== undefined) direct.kill();
        else via.stop(id);
      },
    };
  }
  return launchDirectly(command, file, args, sink);
}

/** Starts `file` as a child of this process, through setpriv where it is installed (see launcher). */
function launchDirectly(command: string, file: string, args: readonly string[], sink: ToolSink): Started {
  const viaSetpriv = launcher();
  const child = spawn(viaSetpriv ?? command, viaSetpriv === null ? args : ['--pdeathsig', 'KILL', '--', file, ...args], {
    env: { ...process.env, LC_ALL: 'C', LANG: 'C' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  child.stdout.on('data', (b: Buffer) => sink.stdout(b));
  child.stderr.on('data', (b: Buffer) => sink.stderr(b));
  let spawnError: NodeJS.ErrnoException | undefined;
  child.on('error', (e: NodeJS.ErrnoException) => { spawnError = e; });
  child.on('close', (code, signal) => {
    sink.end(spawnError !== undefined ? { kind: 'not-started', code: spawnError.code ?? 'EUNKNOWN' } : { kind: 'exited', code, signal });
  });
  return {
    kill: () => {
      // Not skipped when the child itself has exited: helpers it forked may still hold its pipes.
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL'); // the group is gone already; make sure of the child itself
      }
    },
  };
}

/**
 * Runs `command` with `args` (never through a shell), LC_ALL=C so output and messages
 * parse the same everywhere. Resolves on exit 0, rejects with ExecError otherwise.
 *
 * The tool gets a session and process group of its own, and a timeout or an aborted signal
 * SIGKILLs the whole group: a tool that forks helpers (mount, fsck) must not leave them running,
 * holding the device, after its call has ended. It dies with the driver too (see tool-helper and
 * launcher).
 */
export function run(command: string, args: readonly string[], opts: ExecOptions = {}): Promise<ExecResult> {
  const signal = opts.signal ?? callSignal();
  if (signal?.aborted) {
    // The call is over: starting more tools for it would only outlive it.
    return Promise.reject(new ExecError(command, args, null, `not started: ${stopReason(signal)}`, null, 'ABORT_ERR'));
  }
  const file = onPath(command);
  // Looked up here, as spawn would, so a missing tool is still ENOENT and not a launcher's exit 127.
  if (file === undefined) return Promise.reject(new ExecError(command, args, null, `${command} is not installed`, null, 'ENOENT'));
  toolsStarted += 1;
  return new Promise<ExecResult>((resolve, reject) => {
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let stopped: string | undefined;
    const timeoutMs = opts.timeoutMs ?? 300_000;
    const started = process.hrtime.bigint();
    const end = (how: ToolEnd) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      const code = how.kind === 'exited' ? how.code : null;
      log('debug', 'exec', { command, args, code, ms: Number(process.hrtime.bigint() - started) / 1e6, ...(stopped ? { stopped } : {}) });
      const stdout = Buffer.concat(out).toString('utf8');
      const stderr = Buffer.concat(err).toString('utf8');
      if (how.kind === 'not-started') {
        const hint = how.code === 'ENOENT' ? `${command} is not installed` : `${command} could not be started: ${how.code}`;
        reject(new ExecError(command, args, null, hint, null, how.code));
      } else if (how.kind === 'lost' || how.kind === 'helper-unusable') {
        reject(new ExecError(command, args, null, `${stderr}\n${how.why}; the tool was killed with it`, 'SIGKILL'));
      } else if (stopped !== undefined) {
        reject(new ExecError(command, args, code, `${stderr}\nstopped: ${stopped}`, how.signal ?? 'SIGKILL'));
      } else if (code === 0) {
        resolve({ stdout, stderr });
      } else {
        reject(new ExecError(command, args, code, stderr, how.signal));
      }
    };
    let tool: Started | undefined;
    const stop = (why: string) => {
      if (stopped !== undefined) return;
      stopped = why;
      tool?.kill();
    };
    const timer = setTimeout(() => stop(`timed out after ${timeoutMs} ms`), timeoutMs);
    const onAbort = () => stop(signal ? stopReason(signal) : 'aborted');
    signal?.addEventListener('abort', onAbort, { once: true });
    tool = launch(command, file, args, { stdout: (b) => out.push(b), stderr: (b) => err.push(b), end });
  });
}
