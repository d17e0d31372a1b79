// Kubernetes JSON <-> protobuf message bytes, driven by the generated schema, with apimachinery's special types (Time, Quantity, IntOrString, ...).
import protobuf from 'protobufjs/minimal.js';
import type { Json } from '../patch/merge-patch.js';
import { MESSAGES, type FieldSpec } from './schema.gen.js';
import { formatDuration, formatTime, parseDuration, parseTime } from './go-text.js';
import { ProtobufError } from './protobuf-error.js';

export { ProtobufError };

const { Reader, Writer } = protobuf;
type ProtoWriter = protobuf.Writer;
type ProtoReader = protobuf.Reader;

const META = 'k8s.io.apimachinery.pkg.apis.meta.v1';
/** Messages whose JSON form is not their fields: written and read by hand, as apimachinery's own Marshal methods do. */
const TIME = `${META}.Time`;
const MICRO_TIME = `${META}.MicroTime`;
const DURATION = `${META}.Duration`;
const FIELDS_V1 = `${META}.FieldsV1`;
const QUANTITY = 'k8s.io.apimachinery.pkg.api.resource.Quantity';
const INT_OR_STRING = 'k8s.io.apimachinery.pkg.util.intstr.IntOrString';
const RAW_EXTENSION = 'k8s.io.apimachinery.pkg.runtime.RawExtension';


const SCALAR_WIRE: Record<string, number> = { string: 2, bytes: 2, bool: 0, int32: 0, int64: 0 };

function schemaOf(type: string): Readonly<Record<string, FieldSpec>> {
  const m = MESSAGES[type];
  if (m === undefined) throw new ProtobufError(`no protobuf schema for ${type}`);
  return m;
}

/** A named Go slice (e.g. ExtraValue): a message with one repeated `items` field, a plain array in JSON. */
function isSliceWrapper(type: string): boolean {
  const m = MESSAGES[type];
  if (m === undefined) return false;
  const keys = Object.keys(m);
  return keys.length === 1 && keys[0] === 'items' && m.items![0] === 1 && m.items![2] === 'r';
}

/** An int64 as a JS number (a Long where the long package is installed, a number otherwise). */
function readInt64(r: ProtoReader): number {
  const v: unknown = r.int64();
  return typeof v === 'number' ? v : Number(String(v));
}

// ---------------------------------------------------------------- encoding

function writeScalar(w: ProtoWriter, type: string, v: Json, path: string): void {
  switch (type) {
    case 'string':
      if (typeof v !== 'string') throw new ProtobufError(`${path}: expected a string`);
      w.string(v);
      return;
    case 'bytes':
      if (typeof v !== 'string') throw new ProtobufError(`${path}: expected base64 text`);
      w.bytes(Buffer.from(v, 'base64'));
      return;
    case 'bool':
      if (typeof v !== 'boolean') throw new ProtobufError(`${path}: expected a boolean`);
      w.bool(v);
      return;
    case 'int32':
    case 'int64':
      if (typeof v !== 'number' || !Number.isInteger(v)) throw new ProtobufError(`${path}: expected an integer`);
      if (type === 'int32') w.int32(v);
      else w.int64(v);
      return;
    default:
      throw new ProtobufError(`${path}: unsupported field type ${type}`);
  }
}

/** Writes one value of `type` with its field tag (messages length-delimited). */
function writeValue(w: ProtoWriter, id: number, type: string, v: Json, path: string): void {
  const wire = SCALAR_WIRE[type];
  if (wire !== undefined) {
    w.uint32((id << 3) | wire);
    writeScalar(w, type, v, path);
    return;
  }
  w.uint32((id << 3) | 2).fork();
  writeMessageBody(w, type, v, path);
  w.ldelim();
}

function writeMessageBody(w: ProtoWriter, type: string, v: Json, path: string): void {
  switch (type) {
    case TIME:
    case MICRO_TIME: {
      if (typeof v !== 'string') throw new ProtobufError(`${path}: expected a time`);
      const t = parseTime(v, type === MICRO_TIME);
      w.uint32(1 << 3).int64(t.seconds);
      if (t.nanos !== 0) w.uint32(2 << 3).int32(t.nanos);
      return;
    }
    case QUANTITY:
      if (typeof v !== 'string' && typeof v !== 'number') throw new ProtobufError(`${path}: expected a quantity`);
      w.uint32((1 << 3) | 2).string(String(v));
      return;
    case INT_OR_STRING:
      // All three fields, as the Go marshaller writes them: type 0 = int, 1 = string.
      if (typeof v === 'number') w.uint32(1 << 3).int64(0).uint32(2 << 3).int32(v).uint32((3 << 3) | 2).string('');
      else if (typeof v === 'string') w.uint32(1 << 3).int64(1).uint32(2 << 3).int32(0).uint32((3 << 3) | 2).string(v);
      else throw new ProtobufError(`${path}: expected an integer or a string`);
      return;
    case DURATION:
      if (typeof v !== 'string') throw new ProtobufError(`${path}: expected a duration`);
      w.uint32(1 << 3).int64(parseDuration(v));
      return;
    case RAW_EXTENSION:
    case FIELDS_V1:
      // Embedded JSON travels as its JSON bytes.
      w.uint32((1 << 3) | 2).bytes(Buffer.from(JSON.stringify(v)));
      return;
  }
  if (isSliceWrapper(type)) {
    writeFields(w, type, { items: v }, path);
    return;
  }
  writeFields(w, type, v, path);
}

function writeFields(w: ProtoWriter, type: string, v: Json, path: string): void {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new ProtobufError(`${path}: expected an object for ${type.split('.').pop()}`);
  const fields = schemaOf(type);
  // In field-number order, as the Go marshaller writes them (decoders accept any order).
  const ordered = Object.entries(fields).sort((a, b) => a[1][0] - b[1][0]);
  for (const [name, spec] of ordered) {
    const [id, ftype, rule, keyType] = spec;
    if (rule === 'i') {
      // An embedded Go struct: its fields sit in the parent's JSON.
      w.uint32((id << 3) | 2).fork();
      writeFields(w, ftype, v, path);
      w.ldelim();
      continue;
    }
    const fv = v[name];
    if (fv === undefined || fv === null) continue;
    const fpath = `${path}.${name}`;
    if (rule === 'r') {
      if (!Array.isArray(fv)) throw new ProtobufError(`${fpath}: expected a list`);
      fv.forEach((item, i) => writeValue(w, id, ftype, item, `${fpath}[${i}]`));
    } else if (rule === 'm') {
      if (typeof fv !== 'object' || Array.isArray(fv)) throw new ProtobufError(`${fpath}: expected a map`);
      for (const [k, mv] of Object.entries(fv).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
        if (mv === null) continue;
        w.uint32((id << 3) | 2).fork();
        writeValue(w, 1, keyType!, k, fpath);
        writeValue(w, 2, ftype, mv, `${fpath}[${k}]`);
        w.ldelim();
      }
    } else {
      writeValue(w, id, ftype, fv, fpath);
    }
  }
}

/** The message bytes of a JSON object of this message type. */
export function encodeMessage(type: string, v: Json): Uint8Array {
  const w = Writer.create();
  writeMessageBody(w, type, v, type.split('.').pop()!);
  return w.finish();
}

// ---------------------------------------------------------------- decoding

function readScalar(r: ProtoReader, type: string): Json {
  switch (type) {
    case 'string': return r.string();
    case 'bytes': return Buffer.from(r.bytes()).toString('base64');
    case 'bool': return r.bool();
    case 'int32': return r.int32();
    case 'int64': return readInt64(r);
    default: throw new ProtobufError(`unsupported field type ${type}`);
  }
}

function readValue(r: ProtoReader, type: string): Json | undefined {
  if (SCALAR_WIRE[type] !== undefined) return readScalar(r, type);
  const len = r.uint32();
  return readMessageBody(r, type, r.pos + len);
}

/** Go's omitempty, roughly: zero scalars, empty lists, maps and objects are left out of the JSON. */
function isEmpty(v: Json | undefined): boolean {
  if (v === undefined || v === null || v === '' || v === 0 || v === false) return true;
  if (Array.isArray(v)) return v.length === 0;
  return typeof v === 'object' && Object.keys(v).length === 0;
}

function readMessageBody(r: ProtoReader, type: string, end: number): Json | undefined {
  switch (type) {
    case TIME:
    case MICRO_TIME: {
      const f = readRaw(r, end);
      // An empty Time is Go's zero time, which JSON writes as null (omitted here).
      if (f.size === 0) return undefined;
      return formatTime(f.get(1) ?? 0, f.get(2) ?? 0, type === MICRO_TIME);
    }
    case QUANTITY:
    case DURATION:
    case RAW_EXTENSION:
    case FIELDS_V1:
    case INT_OR_STRING:
      break;
    default: {
      if (isSliceWrapper(type)) {
        const o = readFields(r, type, end);
        return (o as { items?: Json }).items ?? [];
      }
      return readFields(r, type, end);
    }
  }
  const o = readFields(r, type, end) as Record<string, Json>;
  switch (type) {
    case QUANTITY: return o.string ?? '0';
    case DURATION: return formatDuration(Number(o.duration ?? 0));
    case INT_OR_STRING: return o.type === 1 ? (o.strVal ?? '') : (o.intVal ?? 0);
    default: {
      const raw = type === FIELDS_V1 ? o.Raw : o.raw;
      if (typeof raw !== 'string' || raw === '') return undefined;
      try {
        return JSON.parse(Buffer.from(raw, 'base64').toString('utf8')) as Json;
      } catch {
        throw new ProtobufError(`${type.split('.').pop()}: the embedded object is not JSON (only JSON is kept inside objects)`);
      }
    }
  }
}

/** Top-level numeric fields of a small message (Time), by number. */
function readRaw(r: ProtoReader, end: number): Map<number, number> {
  const out = new Map<number, number>();
  while (r.pos < end) {
    const tag = r.uint32();
    if ((tag & 7) === 0) out.set(tag >>> 3, readInt64(r));
    else r.skipType(tag & 7);
  }
  return out;
}

function readFields(r: ProtoReader, type: string, end: number): Json {
  const fields = schemaOf(type);
  const byId = new Map(Object.entries(fields).map(([name, spec]) => [spec[0], { name, spec }]));
  const out: Record<string, Json> = {};
  const set = new Set<string>();
  while (r.pos < end) {
    const tag = r.uint32();
    const f = byId.get(tag >>> 3);
    if (f === undefined) {
      r.skipType(tag & 7);
      continue;
    }
    const [, ftype, rule, keyType] = f.spec;
    if (rule === 'i') {
      const len = r.uint32();
      Object.assign(out, readFields(r, ftype, r.pos + len));
      continue;
    }
    if (rule === 'r') {
      const list = (out[f.name] ??= []) as Json[];
      if ((tag & 7) === 2 && SCALAR_WIRE[ftype] === 0) {
        // A packed list of numbers.
        const pend = r.uint32() + r.pos;
        while (r.pos < pend) list.push(readScalar(r, ftype));
      } else {
        list.push(readValue(r, ftype) ?? null);
      }
      continue;
    }
    if (rule === 'm') {
      const map = (out[f.name] ??= {}) as Record<string, Json>;
      const mend = r.uint32() + r.pos;
      let key: Json | undefined;
      let value: Json | undefined;
      while (r.pos < mend) {
        const t = r.uint32();
        if (t >>> 3 === 1) key = readValue(r, keyType!);
        else if (t >>> 3 === 2) value = readValue(r, ftype);
        else r.skipType(t & 7);
      }
      map[String(key ?? '')] = value ?? (SCALAR_WIRE[ftype] === 2 ? '' : null);
      continue;
    }
    const v = readValue(r, ftype);
    if (rule === 'p' && v !== undefined) {
      // A Go pointer is on the wire only when set: its zero value is a value (storageClassName: "", replicas: 0).
      out[f.name] = v;
      set.add(f.name);
    } else if (isEmpty(v)) {
      delete out[f.name];
    } else {
      out[f.name] = v!;
    }
  }
  for (const [k, v] of Object.entries(out)) if (!set.has(k) && isEmpty(v)) delete out[k];
  return out;
}

/** The JSON object of message bytes of this type; zero values are left out, as Go's omitempty leaves them out, except those of pointer fields that were sent. */
export function decodeMessage(type: string, bytes: Uint8Array): Json {
  const r = Reader.create(bytes);
  return readMessageBody(r, type, bytes.length) ?? {};
}
