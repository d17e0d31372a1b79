// A node group's template file: a Node manifest (labels, taints, allocatable) and a NodePools document listing the pools every node of the group has, in the driver's --pool syntax.
import { readFileSync } from 'node:fs';
import type { V1Node } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { checkInlineObjects, ManifestError } from '../bench/manifests/load-manifests.js';
import { isObject } from '../bench/admission/json.js';
import { parsePoolSpec } from '../pool/pool-spec.js';
import { parseBytes } from '../util/quantity.js';
import { paperPool, type PaperPool } from './paper-pool.js';

/** The apiVersion and kind of the document that lists a template's pools. */
export const NODE_POOLS_API_VERSION = 'plan.lode.csi.dev/v1alpha1';
export const NODE_POOLS_KIND = 'NodePools';

export interface NodeTemplate {
  /** The Node every node of the group is a copy of (its name replaced). */
  node: V1Node;
  /** The pools in the order written: the first is the driver's default pool, as with --pool. */
  pools: PaperPool[];
}

/** A template file that cannot be used; the message names the file and what to fix. */
export class TemplateError extends Error {}

/** Reads a template file. */
export function readNodeTemplate(file: string): NodeTemplate {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new TemplateError(`${file}: cannot read the node group's template: ${(err as Error).message}`);
  }
  return parseNodeTemplate(text, file);
}

/** Parses a template's text: exactly one Node and one NodePools document, in either order. */
export function parseNodeTemplate(text: string, file: string): NodeTemplate {
  const nodes: unknown[] = [];
  const poolDocs: Record<string, unknown>[] = [];
  parseAllDocuments(text).forEach((doc, i) => {
    if (doc.errors.length > 0) throw new TemplateError(`${file}: document ${i + 1}: YAML error: ${doc.errors[0]!.message}`);
    const value: unknown = doc.toJS();
    if (value === null || value === undefined) return;
    if (isObject(value) && value.kind === NODE_POOLS_KIND) poolDocs.push(value);
    else if (isObject(value) && value.kind === 'Node') nodes.push(value);
    else throw new TemplateError(`${file}: document ${i + 1}: a template holds one Node and one ${NODE_POOLS_KIND} (${NODE_POOLS_API_VERSION}), not ${isObject(value) ? `kind ${String(value.kind ?? '?')}` : 'this'}`);
  });
  if (nodes.length !== 1) throw new TemplateError(`${file}: a template holds exactly one Node, found ${nodes.length}`);
  if (poolDocs.length !== 1) throw new TemplateError(`${file}: the template has ${poolDocs.length === 0 ? 'no pools: add' : 'more than one'} ${NODE_POOLS_KIND} document (apiVersion ${NODE_POOLS_API_VERSION}) listing the node's pools in the driver's --pool syntax`);
  let node: V1Node;
  try {
    const [loaded] = checkInlineObjects(nodes, file);
    node = loaded!.object as V1Node;
  } catch (err) {
    if (err instanceof ManifestError) throw new TemplateError(err.message);
    throw err;
  }
  return { node, pools: readPools(poolDocs[0]!, file) };
}

function readPools(doc: Record<string, unknown>, file: string): PaperPool[] {
  const where = `${file}: ${NODE_POOLS_KIND}`;
  if (doc.apiVersion !== NODE_POOLS_API_VERSION) throw new TemplateError(`${where}: apiVersion must be ${NODE_POOLS_API_VERSION}, not ${JSON.stringify(doc.apiVersion)}`);
  const list = doc.pools;
  if (!Array.isArray(list) || list.length === 0) throw new TemplateError(`${where}: pools: the template lists no pools (give at least one, e.g. "- spec: local=/var/lib/lode/local,size=100Gi")`);
  const pools: PaperPool[] = [];
  list.forEach((entry: unknown, i) => {
    const at = `${where}: pools[${i}]`;
    if (!isObject(entry) || typeof entry.spec !== 'string') throw new TemplateError(`${at}: spec: required, a pool in the driver's --pool syntax (NAME=DIR[,size=..])`);
    const unknown = Object.keys(entry).filter((k) => !['spec', 'disk', 'filesystem'].includes(k));
    if (unknown.length > 0) throw new TemplateError(`${at}: unknown field ${unknown.map((k) => `"${k}"`).join(', ')} (known: spec, disk, filesystem)`);
    try {
      const config = parsePoolSpec(entry.spec);
      if (pools.some((p) => p.shape.config.name === config.name)) throw new Error(`pool "${config.name}" is listed twice`);
      const disk = entry.disk === undefined ? undefined : parseBytes(String(entry.disk));
      const fs = entry.filesystem === undefined ? undefined : String(entry.filesystem);
      pools.push(paperPool(config, disk, fs));
    } catch (err) {
      if (err instanceof TemplateError) throw err;
      throw new TemplateError(`${at}: ${(err as Error).message}`);
    }
  });
  return pools;
}
