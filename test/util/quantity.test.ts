// Kubernetes quantities: whole bytes from sizes people write (and a clear refusal of units Kubernetes does not have), numbers for the bench, the API server's canonical form.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatBytesQuantity, humanBytes, isQuantity, parseBytes, parseQuantity, quantityString } from '../../src/util/quantity.js';

test('parseBytes reads Kubernetes quantities as whole bytes, rounding a fraction of a byte up', () => {
  const cases: Array<[string, number]> = [
    ['10Gi', 10 * 2 ** 30], ['512Mi', 512 * 2 ** 20], ['1073741824', 2 ** 30], ['1.5G', 1.5e9], ['1k', 1000],
    ['0.5Ki', 512], [' 1Gi ', 2 ** 30], ['1e3', 1000], ['500m', 1], ['1.0000001', 2], ['0', 0], ['.5Mi', 2 ** 19],
  ];
  for (const [text, bytes] of cases) assert.equal(parseBytes(text), bytes, text);
});

test('parseBytes refuses units Kubernetes does not have, naming the ones it has, and never guesses a size', () => {
  for (const text of ['10GB', '512K', '1b', '10GiB', '10 Gi', 'lots', '', '.']) {
    assert.throws(() => parseBytes(text), (err: Error) => {
      assert.match(err.message, new RegExp(`^"${text.replace(/\./g, '\\.')}" is not a size: give a Kubernetes quantity`));
      assert.match(err.message, /Ki, Mi, Gi, Ti, Pi, Ei \(powers of 1024\) or k, M, G, T, P, E \(powers of 1000\)/);
      return true;
    }, text);
  }
  assert.throws(() => parseBytes('-1Gi'), /"-1Gi" is not a size: it is negative/);
  assert.throws(() => parseBytes('1Ei'), /"1Ei" is too large/);
  assert.throws(() => parseBytes('8Pi'), /"8Pi" is too large/, '2^53 is past what a number holds exactly');
  assert.equal(parseBytes('4Pi'), 4 * 2 ** 50);
});

test('parseQuantity gives the bench its numbers, in every form the API server accepts', () => {
  const cases: Array<[string | number, number]> = [['64Mi', 64 * 2 ** 20], ['500m', 0.5], ['1.5G', 1.5e9], ['2e3', 2000], ['-1', -1], ['+.5k', 500], [7, 7], ['5.', 5]];
  for (const [input, value] of cases) assert.equal(parseQuantity(input), value, String(input));
  for (const bad of ['1GB', 'Gi', '1 Gi', '', '1.2.3']) {
    assert.throws(() => parseQuantity(bad), /invalid quantity/, bad);
    assert.equal(isQuantity(bad), false, bad);
  }
  assert.equal(isQuantity('1Gi'), true);
  assert.equal(isQuantity(undefined), false);
});

test('the printers: canonical form, a PV capacity, bytes for people', () => {
  assert.equal(quantityString('1024Mi'), '1Gi');
  assert.equal(quantityString('0.5'), '500m');
  assert.equal(quantityString('not one'), 'not one');
  assert.equal(formatBytesQuantity(64 * 2 ** 20), '64Mi');
  assert.equal(formatBytesQuantity(1000), '1000');
  assert.equal(humanBytes(1.5 * 2 ** 30), '1.50Gi');
  assert.equal(humanBytes(300 * 2 ** 20), '300Mi');
  assert.equal(humanBytes(512), '512B');
});
