// For the harness's own test: a guest file that never finishes, which the guest's per-file bound must
// stop so that the files after it still run.
import { test } from 'node:test';
import { guestOnly } from '../support.js';

test('never finishes', { skip: guestOnly }, async () => {
  // A promise nothing settles, and a timer that keeps the process from exiting on its own.
  await new Promise<void>(() => {
    setInterval(() => undefined, 60_000);
  });
});
