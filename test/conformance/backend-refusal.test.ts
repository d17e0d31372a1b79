// A backend the driver refuses skips its conformance file where that may be, and fails it under CI=true, where every backend must be served.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { backendRefusal } from './backend-refusal.js';

/** Runs `body` with CI set to `value`, as the environment of that run. */
async function withCi<T>(value: string | undefined, body: () => Promise<T>): Promise<T> {
  const was = process.env.CI;
  if (value === undefined) delete process.env.CI;
  else process.env.CI = value;
  try {
    return await body();
  } finally {
    if (was === undefined) delete process.env.CI;
    else process.env.CI = was;
  }
}

test('a backend this driver does not serve: the reason to skip, quoting the driver, outside CI', async () => {
  const why = await withCi(undefined, () => backendRefusal('nosuch'));
  assert.match(why ?? '', /^the driver refuses backend=nosuch: backend "nosuch" is not supported/);
});

test('the same refusal under CI=true fails instead of skipping', async () => {
  await withCi('true', () => assert.rejects(backendRefusal('nosuch'), /^Error: CI=true: the driver refuses backend=nosuch/));
});

test('a backend the driver serves is no reason to skip, under CI=true or not', async () => {
  assert.equal(await withCi('true', () => backendRefusal('dir')), undefined);
});
