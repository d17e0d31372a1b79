// The reservation book on its own, with a clock the test moves: holds lapse exactly at their time, one per claim, creates and capacity see what they should.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ReservationBook } from '../../src/driver/cluster/reservations/reservation-book.js';

const none: ReadonlySet<string> = new Set();

describe('reservation book', () => {
  it('a hold lapses at its TTL, not before; a new hold of the same claim starts its time again without counting twice', () => {
    let now = 1_000;
    const book = new ReservationBook(120_000, () => now);
    book.hold([{ claim: 'default/a-2', pod: 'default/a', podUid: 'u1', pool: 'local', bytes: 40, kind: 'claim' }]);
    now += 119_999;
    assert.equal(book.heldBytes('local', none), 40);
    book.hold([{ claim: 'default/a-2', pod: 'default/a', podUid: 'u1', pool: 'local', bytes: 40, kind: 'claim' }]);
    assert.equal(book.heldBytes('local', none), 40, 'one hold per claim');
    now += 119_999;
    assert.equal(book.heldBytes('local', none), 40, 'renewed');
    now += 1;
    assert.equal(book.heldBytes('local', none), 0);
    assert.deepEqual(book.live(), []);
  });

  it('a claim\'s own create does not count its hold; steering holds count for capacity only; a pod\'s holds go together', () => {
    const book = new ReservationBook(60_000, () => 0);
    book.hold([
      { claim: 'default/a-2', pod: 'default/a', podUid: 'u1', pool: 'local', bytes: 40, kind: 'claim' },
      { claim: 'default/a-3', pod: 'default/a', podUid: 'u1', pool: 'other', bytes: 10, kind: 'claim' },
      { claim: 'default/b-2', pod: 'default/b', podUid: 'u2', pool: 'local', bytes: 30, kind: 'steer' },
    ]);
    assert.equal(book.heldBytes('local', new Set(['default/a-2'])), 0);
    assert.equal(book.heldBytes('local', none), 40, 'steering holds never refuse a create');
    assert.equal(book.steeringBytes('local'), 30);
    assert.equal(book.releasePod('default/a', 'other-uid'), 0, 'a pod made again under the same name is another pod');
    assert.equal(book.releasePod('default/a', 'u1'), 2);
    assert.equal(book.heldBytes('other', none), 0);
    assert.equal(book.release('default/b-2')?.bytes, 30);
    assert.equal(book.steeringBytes('local'), 0);
  });
});
