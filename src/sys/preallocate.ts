// Preallocating files: one file, several at once, and whether a file holds all its blocks; by the tool helper's fallocate(2), else with fallocate(1).
import { promises as fs } from 'node:fs';
import { callThroughHelper, ExecError, run, type ExecOptions } from './exec.js';

/** The file's filesystem cannot preallocate (fallocate is not supported there). */
export class PreallocationUnsupported extends Error {
  constructor(readonly file: string, cause: Error) {
    super(`${file}: the filesystem cannot preallocate: ${cause.message}`);
    this.name = 'PreallocationUnsupported';
  }
}

/**
 * Reserves the first `bytes` of `file` on its filesystem, extending it to that size. Through the
 * tool helper this starts no process, the file must exist (it is never created) and a final
 * symbolic link is not followed; where tools start directly it runs fallocate(1), which would
 * create the file and follow a link (callers make the file first, as the loop backend does
 * with O_NOFOLLOW), and which the call's deadline can stop. A filesystem without fallocate gives PreallocationUnsupported; no
 * space gives ENOSPC's error (the helper's) or the tool's "No space left on device".
 */
export async function preallocateFile(file: string, bytes: number, opts: ExecOptions = {}): Promise<void> {
  try {
    if (await callThroughHelper({ name: 'fallocate', file, bytes }, opts.signal === undefined ? {} : { signal: opts.signal }) !== null) return;
    await run('fallocate', ['--length', String(bytes), file], opts);
  } catch (err) {
    const unsupported = (err as NodeJS.ErrnoException).code === 'EOPNOTSUPP'
      || (err instanceof ExecError && /not supported/i.test(err.stderr));
    throw unsupported ? new PreallocationUnsupported(file, err as Error) : err;
  }
}

/**
 * Preallocates several files at once; says for each whether it is known done. Through the tool
 * helper each is one system call and no process, and its answer is the file's own. Without it,
 * one process does them all: a shell that starts fallocate(1) for each, all at once, each
 * through setpriv so that it dies with the shell, as the shell dies with its caller (exec.ts);
 * starting a tool from the driver forks the whole driver and holds its event loop for the fork,
 * and the shell's own forks are small. A file that is not there (anymore) is skipped, never
 * created, and a link is not followed. A file not known done (a refused call, or any file of the
 * shell's run, whose failures are not told apart) is for the caller to check (isPreallocated)
 * and preallocate alone if it fell short, which gives it the file's own error.
 */
export async function preallocateFiles(files: ReadonlyArray<{ file: string; bytes: number }>, opts: ExecOptions = {}): Promise<boolean[]> {
  const helperOpts = opts.signal === undefined ? {} : { signal: opts.signal };
  const answers = await Promise.all(files.map((f) => callThroughHelper({ name: 'fallocate', file: f.file, bytes: f.bytes }, helperOpts).then((a) => (a === null ? 'direct' : 'done'), () => 'refused')));
  const left = files.filter((_, i) => answers[i] === 'direct');
  if (left.length === 0) return answers.map((a) => a === 'done');
  const script = [
    'p=""; command -v setpriv >/dev/null 2>&1 && p="setpriv --pdeathsig KILL --"',
    'while [ $# -ge 2 ]; do',
    '  if [ -f "$2" ] && [ ! -L "$2" ]; then $p fallocate --length "$1" -- "$2" 2>/dev/null & fi',
    '  shift 2',
    'done',
    'wait',
  ].join('\n');
  await run('sh', ['-c', script, 'sh', ...left.flatMap((f) => [String(f.bytes), f.file])], opts);
  return answers.map((a) => a === 'done');
}

/** Whether `file` is at least `bytes` long with at least that many bytes of blocks allocated (what fallocate leaves). */
export async function isPreallocated(file: string, bytes: number): Promise<boolean> {
  const st = await fs.lstat(file).catch(() => undefined);
  return st !== undefined && st.isFile() && st.size >= bytes && st.blocks * 512 >= bytes;
}
