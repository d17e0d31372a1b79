// For the harness's own test: a guest file that never finishes, which the guest's per-file bound must
// stop so that the files after it still run.
import { test } from 'node:test';
import { guestOnly } from '../support.js';

test('never finishes', { skip: guestOnly }, async () => {
  await new Promise<void>((resolve) => setInterval(() => undefined, 1000).unref() && setTimeout(resolve, 24 * 3600 * 1000));
});
