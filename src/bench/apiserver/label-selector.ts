// The labelSelector query parameter: equality- and set-based requirements, parsed as apimachinery's labels package does (matched in api/selectors.ts).
import type { LabelOperator, LabelRequirement } from '../api/selectors.js';

/** A malformed selector: the caller's mistake (400). */
export class SelectorSyntaxError extends Error {}

type Token = { t: 'id'; v: string } | { t: 'op'; v: string } | { t: '(' } | { t: ')' } | { t: ',' } | { t: '!' };

function tokenize(s: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < s.length) {
    const c = s[i]!;
    if (c === ' ' || c === '\t') { i++; continue; }
    if (c === '(' || c === ')' || c === ',') { out.push({ t: c }); i++; continue; }
    if (c === '!' && s[i + 1] === '=') { out.push({ t: 'op', v: '!=' }); i += 2; continue; }
    if (c === '!') { out.push({ t: '!' }); i++; continue; }
    if (c === '=' && s[i + 1] === '=') { out.push({ t: 'op', v: '==' }); i += 2; continue; }
    if (c === '=' || c === '>' || c === '<') { out.push({ t: 'op', v: c }); i++; continue; }
    let j = i;
    while (j < s.length && !' \t(),!=<>'.includes(s[j]!)) j++;
    out.push({ t: 'id', v: s.slice(i, j) });
    i = j;
  }
  return out;
}

/** Parses `a=b,c!=d,e in (x,y),f notin (z),g,!h`; an empty string selects everything. */
export function parseLabelSelector(s: string): LabelRequirement[] {
  const toks = tokenize(s);
  const reqs: LabelRequirement[] = [];
  let i = 0;
  const fail = (why: string): never => { throw new SelectorSyntaxError(`unable to parse requirement: ${why} in label selector ${JSON.stringify(s)}`); };
  const ident = (): string => {
    const tok = toks[i++];
    if (tok?.t !== 'id') fail('expected a label key or value');
    return (tok as { v: string }).v;
  };
  while (i < toks.length) {
    if (toks[i]!.t === '!') {
      i++;
      reqs.push({ key: ident(), operator: 'DoesNotExist', values: [] });
    } else {
      const key = ident();
      const next = toks[i];
      if (next === undefined || next.t === ',') {
        reqs.push({ key, operator: 'Exists', values: [] });
      } else if (next.t === 'op') {
        i++;
        const op = next.v;
        // An empty value is legal for equality (`a=`).
        const tok = toks[i];
        const value = tok?.t === 'id' ? (i++, tok.v) : '';
        if ((op === '>' || op === '<') && !/^-?\d+$/.test(value)) fail(`for 'Gt', 'Lt' operators, the value must be an integer`);
        const operator: LabelOperator = op === '!=' ? 'NotEquals' : op === '>' ? 'Gt' : op === '<' ? 'Lt' : 'Equals';
        reqs.push({ key, operator, values: [value] });
      } else if (next.t === 'id' && (next.v === 'in' || next.v === 'notin')) {
        i++;
        if (toks[i++]?.t !== '(') fail(`expected '(' after ${next.v}`);
        const values: string[] = [];
        while (toks[i] !== undefined && toks[i]!.t !== ')') {
          const tok = toks[i]!;
          if (tok.t === ',') { i++; continue; }
          values.push(ident());
        }
        if (toks[i++]?.t !== ')') fail(`expected ')'`);
        reqs.push({ key, operator: next.v === 'in' ? 'In' : 'NotIn', values });
      } else {
        fail(`unexpected ${JSON.stringify('v' in next ? next.v : next.t)} after ${key}`);
      }
    }
    if (i < toks.length) {
      if (toks[i]!.t !== ',') fail(`expected ',' between requirements`);
      i++;
    }
  }
  return reqs;
}
