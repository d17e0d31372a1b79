// The one way Lode runs a system tool: argument arrays, C locale, a timeout, and a typed error.
import { spawn } from 'node:child_process';
import { log } from '../util/log.js';

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
  signal?: AbortSignal;
}

export interface ExecResult {
  stdout: string;
  stderr: string;
}

/**
 * Runs `command` with `args` (never through a shell), LC_ALL=C so output and messages
 * parse the same everywhere. Resolves on exit 0, rejects with ExecError otherwise.
 */
export function run(command: string, args: readonly string[], opts: ExecOptions = {}): Promise<ExecResult> {
  return new Promise<ExecResult>((resolve, reject) => {
    const child = spawn(command, args, {
      env: { ...process.env, LC_ALL: 'C', LANG: 'C' },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: opts.timeoutMs ?? 300_000,
      killSignal: 'SIGKILL',
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    let spawnError: NodeJS.ErrnoException | undefined;
    child.on('error', (e: NodeJS.ErrnoException) => { spawnError = e; });
    const started = process.hrtime.bigint();
    child.on('close', (code, signal) => {
      log('debug', 'exec', { command, args, code, ms: Number(process.hrtime.bigint() - started) / 1e6 });
      const stdout = Buffer.concat(out).toString('utf8');
      const stderr = Buffer.concat(err).toString('utf8');
      if (spawnError) {
        const hint = spawnError.code === 'ENOENT' ? `${command} is not installed` : spawnError.message;
        reject(new ExecError(command, args, null, hint, null, spawnError.code ?? 'EUNKNOWN'));
      } else if (code === 0) {
        resolve({ stdout, stderr });
      } else {
        reject(new ExecError(command, args, code, stderr, signal));
      }
    });
  });
}
