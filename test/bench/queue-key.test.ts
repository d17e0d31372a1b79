// Queue keys: the work and the object come back as they went in, whatever the object key holds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseQueueKey, queueKey } from '../../src/bench/runtime/queue-key.js';

test('a queue key is "work:object" and parses back into both', () => {
  assert.equal(queueKey('pvc', 'shop/data-db-0'), 'pvc:shop/data-db-0', 'the string the work queue orders and de-duplicates');
  assert.deepEqual(parseQueueKey(queueKey('pvc', 'shop/data-db-0')), { work: 'pvc', object: 'shop/data-db-0' });
  assert.deepEqual(parseQueueKey(queueKey('resync')), { work: 'resync', object: '' }, 'work on no one object');
  assert.deepEqual(parseQueueKey(queueKey('vsc', 'odd:name')), { work: 'vsc', object: 'odd:name' }, 'a colon in the object stays in the object');
  assert.notEqual(queueKey('pv', 'a'), queueKey('pvc', 'a'), 'the same object under two works is two keys');
});
