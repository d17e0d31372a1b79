// metav1.FormatLabelSelector: a LabelSelector as the printers show it ("app=db,tier in (a,b)", "<none>").
import { isRecord, list, rec, str } from './fields.js';

/**
 * Requirements sorted by key (matchLabels and matchExpressions together), values of set
 * operators sorted, joined with commas; a missing or empty selector is "<none>".
 */
export function formatLabelSelector(selector: unknown): string {
  if (!isRecord(selector)) return '<none>';
  const reqs: { key: string; text: string }[] = [];
  for (const [k, v] of Object.entries(rec(selector, 'matchLabels'))) reqs.push({ key: k, text: `${k}=${String(v)}` });
  for (const e of list(selector, 'matchExpressions')) {
    const key = str(e, 'key');
    const values = list(e, 'values').map(String).sort();
    switch (str(e, 'operator')) {
      case 'In': reqs.push({ key, text: `${key} in (${values.join(',')})` }); break;
      case 'NotIn': reqs.push({ key, text: `${key} notin (${values.join(',')})` }); break;
      case 'Exists': reqs.push({ key, text: key }); break;
      case 'DoesNotExist': reqs.push({ key, text: `!${key}` }); break;
      // An unknown operator makes the selector invalid; upstream prints this then.
      default: return '<error>';
    }
  }
  if (reqs.length === 0) return '<none>';
  // A stable sort by key keeps matchLabels before expressions on the same key, as upstream's.
  return reqs.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)).map((r) => r.text).join(',');
}
