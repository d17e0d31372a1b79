// The bench's own annotations (node pools, volume data) checked where they are written, so a typo fails before any driver starts.
import { invalid, type FieldError } from './field-error.js';
import { at, isObject, type Json } from './json.js';
import { ANN_BENCH_EXPECT_DATA, ANN_BENCH_WRITE_DATA, ANN_LODE_POOLS } from '../api/annotations.js';
import { parseExpectations, parseWrites } from '../api/data-annotations.js';
import { parsePoolsAnnotation } from '../api/node-pools.js';

export function checkPoolsAnnotation(o: Json): FieldError[] {
  const ann = at(o, 'metadata.annotations');
  const v = isObject(ann) ? ann[ANN_LODE_POOLS] : undefined;
  if (v === undefined) return [];
  try {
    parsePoolsAnnotation(String(v));
    return [];
  } catch (err) {
    return [invalid(`metadata.annotations[${ANN_LODE_POOLS}]`, v, (err as Error).message)];
  }
}

/** `metaPath` is "metadata" for a Pod, "spec.template.metadata" for a StatefulSet. */
export function checkDataAnnotations(o: Json, metaPath: string): FieldError[] {
  const ann = at(o, `${metaPath}.annotations`);
  if (!isObject(ann)) return [];
  const errors: FieldError[] = [];
  const attempt = (key: string, parse: (s: string) => unknown): void => {
    if (ann[key] === undefined) return;
    try {
      parse(String(ann[key]));
    } catch (err) {
      errors.push(invalid(`${metaPath}.annotations[${key}]`, ann[key], (err as Error).message));
    }
  };
  attempt(ANN_BENCH_WRITE_DATA, parseWrites);
  attempt(ANN_BENCH_EXPECT_DATA, (s) => parseExpectations(s, 'default'));
  return errors;
}
