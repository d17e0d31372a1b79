// Label selectors: a selector object, a node selector, a pod's nodeSelector and the labelSelector query parameter are matched by one rule.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Node } from '@kubernetes/client-node';
import { labelSelectorMatches, labelsMatch, mapSelectorMatches, nodeSelectorMatches } from '../../src/bench/api/selectors.js';
import { parseLabelSelector } from '../../src/bench/apiserver/label-selector.js';

const labels = { app: 'db', tier: 'backend', n: '5', ver: '1.5' };
const node: V1Node = { metadata: { name: 'n1', labels } };

test('a selector object and the same selector as a query parameter pick the same labels', () => {
  const cases: Array<[string, { key: string; operator: string; values?: string[] }[], boolean]> = [
    ['app in (db,web)', [{ key: 'app', operator: 'In', values: ['db', 'web'] }], true],
    ['app notin (db)', [{ key: 'app', operator: 'NotIn', values: ['db'] }], false],
    ['tier', [{ key: 'tier', operator: 'Exists' }], true],
    ['!zone', [{ key: 'zone', operator: 'DoesNotExist' }], true],
    ['n>4', [{ key: 'n', operator: 'Gt', values: ['4'] }], true],
    ['n<5', [{ key: 'n', operator: 'Lt', values: ['5'] }], false],
    // labels.Requirement.Matches: a label value that is not an integer is neither greater nor less.
    ['ver>1', [{ key: 'ver', operator: 'Gt', values: ['1'] }], false],
  ];
  for (const [query, matchExpressions, want] of cases) {
    assert.equal(labelsMatch(parseLabelSelector(query), labels), want, query);
    assert.equal(labelSelectorMatches({ matchExpressions }, labels), want, `matchExpressions for ${query}`);
    assert.equal(nodeSelectorMatches({ nodeSelectorTerms: [{ matchExpressions }] }, node), want, `node selector for ${query}`);
  }
});

test('matchLabels, nodeSelector maps and what selects nothing or everything', () => {
  assert.equal(labelSelectorMatches({ matchLabels: { app: 'db' } }, labels), true);
  assert.equal(labelSelectorMatches({ matchLabels: { app: 'web' } }, labels), false);
  assert.equal(labelSelectorMatches({}, labels), true, '{} selects everything');
  assert.equal(labelSelectorMatches(undefined, labels), false, 'no selector selects nothing');
  assert.equal(labelSelectorMatches({ matchExpressions: [{ key: 'app', operator: 'Equals', values: ['db'] }] }, labels), false, 'Equals is no operator of a selector object');
  assert.equal(mapSelectorMatches({ app: 'db', tier: 'backend' }, labels), true);
  assert.equal(mapSelectorMatches({ app: 'db', zone: 'a' }, labels), false);
  assert.equal(mapSelectorMatches({ constructor: 'x' }, {}), false, 'a key on Object.prototype is no label');
  assert.equal(nodeSelectorMatches({ nodeSelectorTerms: [{}] }, node), false, 'an empty term matches nothing');
});
