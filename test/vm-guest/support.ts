// Helpers for tests that run inside the test VM: a guard that skips them anywhere else, commands,
// and scratch loop devices and mounts on the guest's tmpfs that each test removes again.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import type { TestContext } from 'node:test';

/** `skip` option for guest tests: they format and mount things, which is only safe in the VM. */
export const guestOnly: string | false =
  process.env.LODE_VM_GUEST === '1' ? false : 'runs inside the test VM: npm run test:vm -- <this file>';

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command; resolves whatever its exit code. */
export function run(cmd: string, args: readonly string[], env?: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { env: env ?? process.env, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err && typeof err.code !== 'number') return reject(err);
      resolve({ code: err ? Number(err.code) : 0, stdout, stderr });
    });
  });
}

/** Runs a command that must succeed, and returns its stdout. */
export async function sh(cmd: string, args: readonly string[], env?: NodeJS.ProcessEnv): Promise<string> {
  const r = await run(cmd, args, env);
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.code}: ${r.stderr.trim() || r.stdout.trim()}`);
  return r.stdout;
}

const stacks = new WeakMap<TestContext, Array<() => Promise<unknown>>>();

/** Runs `fn` after `t`, newest first (a mount goes before its device, a device before its image). */
export function defer(t: TestContext, fn: () => Promise<unknown>): void {
  let stack = stacks.get(t);
  if (!stack) {
    const s: Array<() => Promise<unknown>> = [];
    stacks.set(t, s);
    stack = s;
    t.after(async () => {
      const errors: unknown[] = [];
      for (const f of s.reverse()) await f().catch((e: unknown) => errors.push(e));
      if (errors.length > 0) throw errors[0];
    });
  }
  stack.push(fn);
}

export async function scratchDir(t: TestContext, prefix: string): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), `${prefix}-`));
  defer(t, () => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** A sparse image of `sizeMiB` on the guest's tmpfs behind a fresh loop device, detached after `t`. */
export async function scratchLoop(t: TestContext, sizeMiB: number): Promise<string> {
  const dir = await scratchDir(t, 'loop');
  const image = path.join(dir, 'disk.img');
  await sh('truncate', ['-s', `${sizeMiB}M`, image]);
  const device = (await sh('losetup', ['--find', '--show', image])).trim();
  defer(t, () => sh('losetup', ['-d', device]));
  return device;
}

/** Mounts `device` on a new directory, unmounted after `t`. */
export async function scratchMount(t: TestContext, device: string, fsType: string, options: readonly string[]): Promise<string> {
  const dir = await scratchDir(t, 'mnt');
  await sh('mount', ['-t', fsType, ...(options.length ? ['-o', options.join(',')] : []), device, dir]);
  defer(t, () => sh('umount', [dir]));
  return dir;
}

export const MiB = 1024 * 1024;
