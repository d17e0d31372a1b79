// Test support: finding a tool on PATH, and the one rule for a missing prerequisite: a skip that says why and how to install it, or under CI=true, whose set-up (.ci/run) installs everything, a failure.
import assert from 'node:assert/strict';
import { accessSync, constants } from 'node:fs';
import * as path from 'node:path';
import type { TestContext } from 'node:test';

/** The executable `command` on PATH (or in the sbin directories root has), or undefined. */
export function which(command: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(':').concat(['/usr/sbin', '/sbin'])) {
    if (!dir) continue;
    const p = path.join(dir, command);
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      // not in this directory
    }
  }
  return undefined;
}

/** Whether missing prerequisites fail rather than skip: CI installs them all, so one missing there is a broken set-up. */
export function prerequisitesRequired(): boolean {
  return process.env.CI === 'true';
}

/** `why`, with how to get what is missing when an install line is known. */
export function missingMessage(why: string, install?: string): string {
  return install === undefined ? why : `${why} (install with \`${install}\`)`;
}

/**
 * The reason to skip when a prerequisite is missing (`why` defined), for a test's `skip`
 * option; under CI=true it throws instead, which fails the test file that asked.
 */
export function skipUnlessRequired(why: string | undefined, install?: string): string | undefined {
  if (why === undefined) return undefined;
  const message = missingMessage(why, install);
  if (prerequisitesRequired()) throw new Error(`CI=true: ${message}`);
  return message;
}

/** Inside a test: skips `t` when `why` is defined (and returns true), or fails it under CI=true. */
export function skipOrFail(t: TestContext, why: string | undefined, install?: string): boolean {
  if (why === undefined) return false;
  const message = missingMessage(why, install);
  if (prerequisitesRequired()) assert.fail(`CI=true: ${message}`);
  t.skip(message);
  return true;
}

/** Why a test that attaches loop devices and mounts filesystems cannot run here, or undefined. */
export function rootMissing(what = 'the driver needs root (loop devices, mounts)'): string | undefined {
  return process.getuid?.() !== 0 ? `${what}: run the tests as root (sudo npm test)` : undefined;
}
