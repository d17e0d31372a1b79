// ObjectMeta rules every kind shares: a name (or generateName) of the kind's shape, a namespace that is a DNS label, valid labels.
import { invalid, required, type FieldError } from './field-error.js';
import { isObject, type Json } from './json.js';
import { check1035Label, checkLabel, checkLabelValue, checkQualifiedName, checkSubdomain, labelProblems, subdomainProblems } from './names.js';

export interface MetaRules {
  namespaced: boolean;
  /** Name shape: a DNS subdomain for most kinds, a label for Namespaces, an RFC 1035 label for Services. */
  name: 'subdomain' | 'label' | '1035';
}

export function validateMetadata(o: Json, rules: MetaRules): FieldError[] {
  const errors: FieldError[] = [];
  const meta = o.metadata;
  if (!isObject(meta)) return [required('metadata.name', 'name or generateName is required')];
  const check = rules.name === 'label' ? checkLabel : rules.name === '1035' ? check1035Label : checkSubdomain;
  if (meta.name === undefined || meta.name === '') {
    if (typeof meta.generateName !== 'string' || meta.generateName === '') errors.push(required('metadata.name', 'name or generateName is required'));
    else {
      // A generated name gets a suffix, so the prefix may end in '-'.
      const prefix = meta.generateName.replace(/-+$/, '');
      const problems = rules.name === 'subdomain' ? subdomainProblems(prefix) : labelProblems(prefix);
      for (const m of problems) errors.push(invalid('metadata.generateName', meta.generateName, m));
    }
  } else if (typeof meta.name !== 'string') {
    errors.push(invalid('metadata.name', meta.name, 'must be a string'));
  } else {
    errors.push(...check('metadata.name', meta.name));
  }
  if (rules.namespaced && meta.namespace !== undefined) {
    if (typeof meta.namespace !== 'string' || meta.namespace === '') errors.push(invalid('metadata.namespace', meta.namespace, 'must be a non-empty string'));
    else errors.push(...checkLabel('metadata.namespace', meta.namespace));
  }
  if (meta.labels !== undefined) {
    if (!isObject(meta.labels)) errors.push(invalid('metadata.labels', meta.labels, 'must be a map of strings'));
    else for (const [k, v] of Object.entries(meta.labels)) {
      errors.push(...checkQualifiedName('metadata.labels', k));
      if (typeof v !== 'string') errors.push(invalid(`metadata.labels`, v, 'label values must be strings'));
      else errors.push(...checkLabelValue('metadata.labels', v));
    }
  }
  if (meta.annotations !== undefined) {
    if (!isObject(meta.annotations)) errors.push(invalid('metadata.annotations', meta.annotations, 'must be a map of strings'));
    else for (const [k, v] of Object.entries(meta.annotations)) {
      errors.push(...checkQualifiedName('metadata.annotations', k.toLowerCase()));
      if (typeof v !== 'string') errors.push(invalid(`metadata.annotations`, v, 'annotation values must be strings'));
    }
  }
  return errors;
}
