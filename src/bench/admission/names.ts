// Name rules of the API server: RFC 1123 subdomains and labels, qualified names (label keys), label values.
import { invalid, tooLong, type FieldError } from './field-error.js';

const LABEL = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const SUBDOMAIN = `${LABEL}(\\.${LABEL})*`;
const LABEL_RE = new RegExp(`^${LABEL}$`);
const SUBDOMAIN_RE = new RegExp(`^${SUBDOMAIN}$`);
const QUALIFIED_NAME = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const QUALIFIED_RE = new RegExp(`^${QUALIFIED_NAME}$`);

/** Messages for a name that is not a DNS-1123 subdomain (at most 253 characters): Pods, PVCs, PVs, classes, StatefulSets. */
export function subdomainProblems(v: string): string[] {
  const out: string[] = [];
  if (v.length > 253) out.push('must be no more than 253 characters');
  if (!SUBDOMAIN_RE.test(v)) out.push(`a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '${SUBDOMAIN}')`);
  return out;
}

/** Messages for a name that is not a DNS-1123 label (at most 63): namespaces, container and volume names. */
export function labelProblems(v: string): string[] {
  const out: string[] = [];
  if (v.length > 63) out.push('must be no more than 63 characters');
  if (!LABEL_RE.test(v)) out.push(`a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '${LABEL}')`);
  return out;
}

export function checkSubdomain(field: string, v: string): FieldError[] {
  return subdomainProblems(v).map((m) => invalid(field, v, m));
}

export function checkLabel(field: string, v: string): FieldError[] {
  return labelProblems(v).map((m) => invalid(field, v, m));
}

/** A qualified name ([prefix/]name, the prefix a subdomain): label and annotation keys, provisioner and driver names. */
export function checkQualifiedName(field: string, v: string): FieldError[] {
  const parts = v.split('/');
  const out: FieldError[] = [];
  let name = v;
  if (parts.length === 2) {
    const [prefix, n] = parts as [string, string];
    name = n;
    if (prefix.length === 0) out.push(invalid(field, v, 'prefix part must be non-empty'));
    else for (const m of subdomainProblems(prefix)) out.push(invalid(field, v, `prefix part ${m}`));
  } else if (parts.length > 2) {
    return [invalid(field, v, `a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '${QUALIFIED_NAME}') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`)];
  }
  if (name.length === 0) out.push(invalid(field, v, 'name part must be non-empty'));
  else if (name.length > 63) out.push(invalid(field, v, 'name part must be no more than 63 characters'));
  else if (!QUALIFIED_RE.test(name)) out.push(invalid(field, v, `name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '${QUALIFIED_NAME}')`));
  return out;
}

export function checkLabelValue(field: string, v: string): FieldError[] {
  if (v.length > 63) return [tooLong(field, v, 63)];
  if (v !== '' && !QUALIFIED_RE.test(v)) return [invalid(field, v, `a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(${QUALIFIED_NAME})?')`)];
  return [];
}

const DNS1035 = '[a-z]([-a-z0-9]*[a-z0-9])?';
const DNS1035_RE = new RegExp(`^${DNS1035}$`);

/** Service names are RFC 1035 labels: they become DNS names and environment variable prefixes, so they start with a letter. */
export function check1035Label(field: string, v: string): FieldError[] {
  const out: FieldError[] = [];
  if (v.length > 63) out.push(invalid(field, v, 'must be no more than 63 characters'));
  if (!DNS1035_RE.test(v)) out.push(invalid(field, v, `a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '${DNS1035}')`));
  return out;
}
