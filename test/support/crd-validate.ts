/**
 * Validates writes to custom resources the way kube-apiserver 1.32 does with a CRD's
 * structural schema, so that a write the real server would refuse also fails in tests,
 * with the same causes. Ported from apiextensions-apiserver v0.32, kube-openapi and
 * apimachinery of that release:
 *
 * - decoding: unknown fields pruned, non-nullable nulls without a default dropped, then
 *   `default`s applied (also inside objects that are present, and to the stored object,
 *   which the apiserver defaults when it reads it);
 * - the strategy: a create drops `status` and an update keeps the stored `status` when the
 *   version has a status subresource; a status write keeps everything but `status`;
 * - OpenAPI validation (kube-openapi's messages, paths and quirks), list-type set/map
 *   uniqueness, then the CEL `x-kubernetes-validations` unless an earlier error blocks them;
 * - ratcheting as 1.32 does it: an update of the main resource drops errors on values
 *   unchanged from the stored object; a status write ratchets only list uniqueness.
 *
 * CEL is @marcbachmann/cel-js (parsed and type-checked with self and oldSelf as dyn) plus
 * the Kubernetes library functions the CRDs call (isIP, ip().family(), isCIDR, url()…).
 *
 * Not reproduced: ObjectMeta validation (names, labels…), generation, managedFields and
 * the CEL cost budget. Approximated: when no `anyOf` branch matches, the
 * first branch's errors are reported (kube-openapi picks the branch that matched most),
 * and CEL evaluation errors carry cel-js's text (`No such key: x`), not cel-go's.
 */
import { readFileSync } from 'node:fs';
import { load as parseYaml } from 'js-yaml';
import { Environment, EvaluationError, Optional, ParseError, TypeError as CelTypeError } from '@marcbachmann/cel-js';

// ---------------------------------------------------------------------------------------
// Public types
// ---------------------------------------------------------------------------------------

export type CauseReason =
  | 'FieldValueInvalid'
  | 'FieldValueRequired'
  | 'FieldValueTooLong'
  | 'FieldValueTooMany'
  | 'FieldValueDuplicate'
  | 'FieldValueNotSupported'
  | 'FieldValueForbidden'
  | 'FieldValueTypeInvalid';

/**
 * One entry of a 422 Status's `details.causes`. As in the real Status, `message` is the
 * field error without its field (`Too many: 17: must have at most 16 items`); the
 * Status's own message joins `field: message` (see `invalidMessage`).
 */
export interface Cause {
  reason: CauseReason;
  message: string;
  field: string;
}

export interface Rule {
  readonly rule: string;
  readonly message: string | undefined;
  readonly messageExpression: string | undefined;
  readonly reason: CauseReason | undefined;
  readonly fieldPath: readonly Seg[];
  readonly optionalOldSelf: boolean;
  readonly usesOldSelf: boolean;
  readonly program: CelProgram | undefined;
  readonly messageProgram: CelProgram | undefined;
  /** Why the evaluator cannot run this rule; such a rule is skipped. */
  readonly unsupported: string | undefined;
}

/** One node of a structural schema, reduced to what the apiserver enforces. */
export interface Schema {
  /** Where the node sits, e.g. `status.platformStatus.aws.cloudLoadBalancerConfig.dnsType`. */
  readonly path: string;
  /** `type` as written ('' when absent); CEL errors print it as the bad value. */
  readonly type: string;
  readonly intOrString: boolean;
  readonly nullable: boolean;
  /** Only formats the apiserver checks; others are stripped as it strips them. */
  readonly format: string;
  readonly enumValues: readonly unknown[] | undefined;
  readonly required: readonly string[];
  readonly properties: ReadonlyMap<string, Schema> | undefined;
  readonly additionalProperties: Schema | undefined;
  readonly items: Schema | undefined;
  readonly maxItems: number | undefined;
  readonly minItems: number | undefined;
  readonly maxLength: number | undefined;
  readonly minLength: number | undefined;
  readonly maxProperties: number | undefined;
  readonly minProperties: number | undefined;
  readonly maximum: number | undefined;
  readonly minimum: number | undefined;
  readonly exclusiveMaximum: boolean;
  readonly exclusiveMinimum: boolean;
  readonly pattern: { readonly source: string; readonly regex: RegExp } | undefined;
  readonly anyOf: readonly Schema[];
  readonly defaultValue: unknown;
  readonly listType: string | undefined;
  readonly listMapKeys: readonly string[];
  readonly preserveUnknownFields: boolean;
  readonly embeddedResource: boolean;
  readonly rules: readonly Rule[];
}

export interface CrdVersion {
  readonly name: string;
  readonly served: boolean;
  readonly storage: boolean;
  readonly statusSubresource: boolean;
  readonly schema: Schema;
}

export interface Crd {
  readonly group: string;
  readonly plural: string;
  readonly kind: string;
  readonly scope: 'Namespaced' | 'Cluster';
  readonly versions: Readonly<Record<string, CrdVersion>>;
}

export interface ValidationResult {
  /** Empty when the apiserver would accept the write. */
  causes: Cause[];
  /** What the apiserver would store: pruned, defaulted, with `status` handled as its strategy does. */
  object: unknown;
  /** Paths of the fields pruned from the request (the apiserver's `unknown field` warnings). */
  unknownFields: string[];
}

// ---------------------------------------------------------------------------------------
// Loading a CRD
// ---------------------------------------------------------------------------------------

export function loadCrd(path: string): Crd {
  const doc = parseYaml(readFileSync(path, 'utf8')) as unknown;
  if (!isObject(doc) || doc.apiVersion !== 'apiextensions.k8s.io/v1' || doc.kind !== 'CustomResourceDefinition') {
    throw new Error(`${path}: not an apiextensions.k8s.io/v1 CustomResourceDefinition`);
  }
  const spec = asObject(doc.spec, `${path}: spec`);
  const names = asObject(spec.names, `${path}: spec.names`);
  const scope = spec.scope;
  if (scope !== 'Namespaced' && scope !== 'Cluster') throw new Error(`${path}: spec.scope ${String(scope)} is not Namespaced or Cluster`);
  const versions: Record<string, CrdVersion> = {};
  for (const raw of asArray(spec.versions, `${path}: spec.versions`)) {
    const v = asObject(raw, `${path}: spec.versions[]`);
    const name = String(v.name);
    const schemaRaw = asObject(asObject(v.schema, `${path}: version ${name} schema`).openAPIV3Schema, `${path}: version ${name} openAPIV3Schema`);
    const subresources = isObject(v.subresources) ? v.subresources : isObject(spec.subresources) ? spec.subresources : {};
    versions[name] = {
      name,
      served: v.served === true,
      storage: v.storage === true,
      statusSubresource: isObject(subresources.status),
      schema: compileSchema(schemaRaw, '', `${path}: version ${name}`),
    };
  }
  return { group: String(spec.group), plural: String(names.plural), kind: String(names.kind), scope, versions };
}

/** Rules (CEL) that the evaluator could not handle — tests assert none sit on the paths lbdns writes. */
export function unsupportedRules(crd: Crd): { path: string; rule: string }[] {
  const out: { path: string; rule: string }[] = [];
  const walk = (s: Schema): void => {
    for (const r of s.rules) if (r.unsupported !== undefined) out.push({ path: s.path, rule: r.rule });
    for (const p of s.properties?.values() ?? []) walk(p);
    if (s.additionalProperties) walk(s.additionalProperties);
    if (s.items) walk(s.items);
  };
  for (const v of Object.values(crd.versions)) walk(v.schema);
  return out;
}

const IGNORED_KEYWORDS = new Set(['description', 'title', 'example', 'externalDocs', '$schema', 'x-kubernetes-map-type']);

function compileSchema(raw: Record<string, unknown>, path: string, where: string, inAnyOf = false): Schema {
  const at = `${where}: ${path || '<root>'}`;
  for (const key of Object.keys(raw)) {
    if (!HANDLED_KEYWORDS.has(key) && !IGNORED_KEYWORDS.has(key)) {
      throw new Error(`${at}: schema keyword "${key}" is not implemented by crd-validate`);
    }
  }
  if (raw.additionalProperties !== undefined && !isObject(raw.additionalProperties)) {
    throw new Error(`${at}: additionalProperties other than a schema is not implemented by crd-validate`);
  }
  const num = (k: string): number | undefined => (typeof raw[k] === 'number' ? (raw[k] as number) : undefined);
  const format = typeof raw.format === 'string' ? checkedFormat(raw.format, at) : '';
  let pattern: Schema['pattern'];
  if (typeof raw.pattern === 'string') {
    const regex = re2(raw.pattern);
    if (regex === undefined) throw new Error(`${at}: pattern ${JSON.stringify(raw.pattern)} cannot be translated to a JavaScript regex`);
    pattern = { source: raw.pattern, regex };
  }
  const properties = isObject(raw.properties)
    ? new Map(Object.entries(raw.properties).map(([k, v]) => [k, compileSchema(asObject(v, at), join(path, k), where, inAnyOf)]))
    : undefined;
  const rulesRaw = raw['x-kubernetes-validations'];
  if (inAnyOf && rulesRaw !== undefined) throw new Error(`${at}: x-kubernetes-validations inside anyOf is not implemented by crd-validate`);
  return {
    path,
    type: typeof raw.type === 'string' ? raw.type : '',
    intOrString: raw['x-kubernetes-int-or-string'] === true,
    nullable: raw.nullable === true,
    format,
    enumValues: Array.isArray(raw.enum) ? raw.enum : undefined,
    required: Array.isArray(raw.required) ? raw.required.map(String) : [],
    properties,
    additionalProperties: isObject(raw.additionalProperties)
      ? compileSchema(raw.additionalProperties, `${path}[*]`, where, inAnyOf)
      : undefined,
    items: isObject(raw.items) ? compileSchema(raw.items, `${path}[*]`, where, inAnyOf) : undefined,
    maxItems: num('maxItems'),
    minItems: num('minItems'),
    maxLength: num('maxLength'),
    minLength: num('minLength'),
    maxProperties: num('maxProperties'),
    minProperties: num('minProperties'),
    maximum: num('maximum'),
    minimum: num('minimum'),
    exclusiveMaximum: raw.exclusiveMaximum === true,
    exclusiveMinimum: raw.exclusiveMinimum === true,
    pattern,
    anyOf: Array.isArray(raw.anyOf) ? raw.anyOf.map((b) => compileSchema(asObject(b, at), path, where, true)) : [],
    defaultValue: raw.default ?? undefined,
    listType: typeof raw['x-kubernetes-list-type'] === 'string' ? raw['x-kubernetes-list-type'] : undefined,
    listMapKeys: Array.isArray(raw['x-kubernetes-list-map-keys']) ? raw['x-kubernetes-list-map-keys'].map(String) : [],
    preserveUnknownFields: raw['x-kubernetes-preserve-unknown-fields'] === true,
    embeddedResource: raw['x-kubernetes-embedded-resource'] === true,
    rules: Array.isArray(rulesRaw) ? rulesRaw.map((r) => compileRule(asObject(r, at))) : [],
  };
}

const HANDLED_KEYWORDS = new Set([
  'type', 'nullable', 'format', 'enum', 'required', 'properties', 'additionalProperties', 'items',
  'maxItems', 'minItems', 'maxLength', 'minLength', 'maxProperties', 'minProperties', 'maximum', 'minimum',
  'exclusiveMaximum', 'exclusiveMinimum', 'pattern', 'anyOf', 'default', 'x-kubernetes-int-or-string',
  'x-kubernetes-list-type', 'x-kubernetes-list-map-keys', 'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-embedded-resource', 'x-kubernetes-validations',
]);

const REASONS: ReadonlySet<string> = new Set(['FieldValueInvalid', 'FieldValueForbidden', 'FieldValueRequired', 'FieldValueDuplicate']);

function compileRule(raw: Record<string, unknown>): Rule {
  const rule = String(raw.rule ?? '');
  const message = typeof raw.message === 'string' && raw.message !== '' ? raw.message : undefined;
  const messageExpression = typeof raw.messageExpression === 'string' && raw.messageExpression !== '' ? raw.messageExpression : undefined;
  const reason = typeof raw.reason === 'string' && REASONS.has(raw.reason) ? (raw.reason as CauseReason) : undefined;
  const base = { rule, message, messageExpression, reason, optionalOldSelf: raw.optionalOldSelf === true };
  const fieldPath = typeof raw.fieldPath === 'string' ? parseRuleFieldPath(raw.fieldPath) : [];
  if (fieldPath === undefined) {
    return { ...base, fieldPath: [], usesOldSelf: false, program: undefined, messageProgram: undefined, unsupported: `fieldPath ${String(raw.fieldPath)}` };
  }
  try {
    const program = compileCel(rule);
    const messageProgram = messageExpression === undefined ? undefined : compileCel(messageExpression);
    return { ...base, fieldPath, usesOldSelf: /\boldSelf\b/.test(rule), program, messageProgram, unsupported: undefined };
  } catch (err) {
    if (!(err instanceof CelError)) throw err;
    return { ...base, fieldPath, usesOldSelf: /\boldSelf\b/.test(rule), program: undefined, messageProgram: undefined, unsupported: err.message };
  }
}

/** `.a.b` or `.a['b.c']`, as the apiserver accepts for `fieldPath` (array indexes are refused there). */
function parseRuleFieldPath(text: string): Seg[] | undefined {
  const segs: Seg[] = [];
  const re = /\.([A-Za-z_][A-Za-z0-9_-]*)|\['((?:[^'\\]|\\.)*)'\]/y;
  let i = 0;
  while (i < text.length) {
    re.lastIndex = i;
    const m = re.exec(text);
    if (!m) return undefined;
    segs.push(m[1] ?? (m[2] ?? '').replace(/\\(.)/g, '$1'));
    i = re.lastIndex;
  }
  return segs;
}

// ---------------------------------------------------------------------------------------
// The write pipeline
// ---------------------------------------------------------------------------------------

/**
 * Validates a write of `obj` (version `version`) as the apiserver does. `oldObj` is the
 * stored object for an update; omit it for a create. With `subresource: 'status'` the
 * write is a status update: only `status` is taken from `obj` (so `oldObj` is required).
 */
export function validateObject(
  crd: Crd,
  version: string,
  obj: unknown,
  oldObj?: unknown,
  opts?: { subresource?: 'status' },
): ValidationResult {
  const v = crd.versions[version];
  if (!v || !v.served) throw new Error(`${crd.plural}.${crd.group} does not serve version ${version}`);
  const statusWrite = opts?.subresource === 'status';
  if (statusWrite && oldObj === undefined) throw new Error('a status write updates a stored object: pass oldObj');
  if (statusWrite && !v.statusSubresource) throw new Error(`${crd.plural}.${crd.group}/${version} has no status subresource`);
  const root = v.schema;

  const unknownFields: string[] = [];
  let next = decode(structuredClone(obj), root, unknownFields);
  const old = oldObj === undefined ? undefined : decode(structuredClone(oldObj), root, []);

  if (isObject(next)) {
    if (statusWrite && isObject(old)) {
      const merged = structuredClone(old);
      if ('status' in next) merged.status = next.status;
      else delete merged.status;
      next = merged;
    } else if (v.statusSubresource) {
      if (isObject(old) && 'status' in old) next.status = structuredClone(old.status);
      else delete next.status;
    }
  }

  // The validator stops at a wrong kind or apiVersion; the strategy still checks lists and rules.
  const causes = typeMetaCauses(crd, version, next);
  if (statusWrite) {
    if (causes.length === 0 && isObject(next) && 'status' in next) {
      const errs: OpenApiError[] = [];
      const statusSchema = root.properties?.get('status');
      if (statusSchema) validateNode(statusSchema, next.status, [], errs);
      causes.push(...errs.map((e) => openApiCause(e, 'status')));
    }
    const newList = listCauses(root, next);
    if (newList.length > 0 && listCauses(root, old).length === 0) causes.push(...newList);
  } else {
    if (causes.length === 0) {
      const errs: OpenApiError[] = [];
      validateNode(root, next, [], errs);
      const kept = old === undefined ? errs : errs.filter((e) => !unchanged(root, next, old, e.origin));
      causes.push(...kept.map((e) => openApiCause(e, undefined)));
    }
    if (old === undefined || listCauses(root, old).length === 0) causes.push(...listCauses(root, next));
  }

  if (causes.some((c) => BLOCKING.has(c.reason))) {
    causes.push(
      fieldError('FieldValueInvalid', '<nil>', null, 'some validation rules were not checked because the object was invalid; correct the existing errors to complete validation'),
    );
  } else {
    const ratchet = old !== undefined && !statusWrite ? { root, next, old } : undefined;
    celValidate(root, next, old, [], ratchet, causes);
  }
  return { causes, object: next, unknownFields };
}

/** The message of the 422 Status the apiserver returns for these causes. */
export function invalidMessage(crd: Crd, name: string, causes: readonly Cause[]): string {
  const head = `${crd.kind}${crd.group ? `.${crd.group}` : ''} ${goQuote(name)} is invalid`;
  const messages = [...new Set(causes.map((c) => `${c.field}: ${c.message}`))];
  if (messages.length === 0) return head;
  return `${head}: ${messages.length === 1 ? messages[0] : `[${messages.join(', ')}]`}`;
}

const BLOCKING: ReadonlySet<CauseReason> = new Set([
  'FieldValueNotSupported', 'FieldValueRequired', 'FieldValueTooLong', 'FieldValueTooMany', 'FieldValueTypeInvalid',
]);

function typeMetaCauses(crd: Crd, version: string, obj: unknown): Cause[] {
  const kind = isObject(obj) && typeof obj.kind === 'string' ? obj.kind : '';
  const apiVersion = isObject(obj) && typeof obj.apiVersion === 'string' ? obj.apiVersion : '';
  const want = `${crd.group}/${version}`;
  const out: Cause[] = [];
  if (kind !== crd.kind) out.push(fieldError('FieldValueInvalid', 'kind', kind, `must be ${crd.kind}`));
  if (apiVersion !== want) out.push(fieldError('FieldValueInvalid', 'apiVersion', apiVersion, `must be ${want}`));
  return out;
}

function decode(obj: unknown, root: Schema, unknownFields: string[]): unknown {
  prune(obj, root, true, [], unknownFields);
  pruneNulls(obj, root);
  applyDefaults(obj, root);
  unknownFields.sort();
  return obj;
}

// ---------------------------------------------------------------------------------------
// Pruning and defaulting (apiextensions-apiserver schema/pruning and schema/defaulting)
// ---------------------------------------------------------------------------------------

const META_FIELDS = new Set(['apiVersion', 'kind', 'metadata']);

function prune(x: unknown, s: Schema | undefined, embedded: boolean, at: Seg[], unknown: string[]): void {
  if (s?.preserveUnknownFields) {
    skipPrune(x, s, embedded, at, unknown);
    return;
  }
  if (Array.isArray(x)) {
    x.forEach((v, i) => prune(v, s?.items, s?.items?.embeddedResource ?? false, [...at, i], unknown));
    return;
  }
  if (!isObject(x)) return;
  for (const k of Object.keys(x)) {
    if (s && embedded && META_FIELDS.has(k)) continue;
    const sub = s?.properties?.get(k) ?? s?.additionalProperties;
    if (s && sub) {
      prune(x[k], sub, sub.embeddedResource, [...at, k], unknown);
    } else {
      if (!s || !META_FIELDS.has(k) || at.length > 0) unknown.push(fieldPath([...at, k]));
      delete x[k];
    }
  }
}

function skipPrune(x: unknown, s: Schema, embedded: boolean, at: Seg[], unknown: string[]): void {
  if (Array.isArray(x)) {
    x.forEach((v, i) => {
      if (s.items) skipPrune(v, s.items, s.items.embeddedResource, [...at, i], unknown);
    });
    return;
  }
  if (!isObject(x)) return;
  for (const k of Object.keys(x)) {
    if (embedded && META_FIELDS.has(k)) continue;
    const sub = s.properties?.get(k) ?? s.additionalProperties;
    if (sub) prune(x[k], sub, sub.embeddedResource, [...at, k], unknown);
  }
}

function hasDefault(s: Schema | undefined): s is Schema {
  return s !== undefined && s.defaultValue !== undefined && s.defaultValue !== null;
}

function pruneNulls(x: unknown, s: Schema | undefined): void {
  if (Array.isArray(x)) {
    for (const v of x) pruneNulls(v, s?.items);
  } else if (isObject(x)) {
    for (const [k, v] of Object.entries(x)) {
      const sub = s?.properties?.get(k) ?? s?.additionalProperties;
      if (v === null && sub !== undefined && !sub.nullable && !hasDefault(sub)) delete x[k];
      else pruneNulls(v, sub);
    }
  }
}

function applyDefaults(x: unknown, s: Schema | undefined): void {
  if (!s) return;
  if (Array.isArray(x)) {
    x.forEach((v, i) => {
      if (v === null && s.items && !s.items.nullable && hasDefault(s.items)) x[i] = structuredClone(s.items.defaultValue);
      applyDefaults(x[i], s.items);
    });
  } else if (isObject(x)) {
    for (const [k, prop] of s.properties ?? []) {
      if (!hasDefault(prop)) continue;
      if (!(k in x) || (x[k] === null && !prop.nullable)) x[k] = structuredClone(prop.defaultValue);
    }
    for (const k of Object.keys(x)) {
      const prop = s.properties?.get(k);
      if (prop) {
        applyDefaults(x[k], prop);
      } else if (s.additionalProperties) {
        const ap = s.additionalProperties;
        if (x[k] === null && !ap.nullable && hasDefault(ap)) x[k] = structuredClone(ap.defaultValue);
        applyDefaults(x[k], ap);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------
// OpenAPI validation (kube-openapi pkg/validation/validate, as the apiserver wires it)
// ---------------------------------------------------------------------------------------

/** A step in a path: a field, a list index, or a key of a map (additionalProperties). */
type Seg = string | number | { readonly key: string };

interface OpenApiError {
  readonly code: 'required' | 'enum' | 'tooLong' | 'maxItems' | 'maxProperties' | 'type' | 'other' | 'composite';
  /** kube-openapi's dotted name of the value, relative to where validation started. */
  readonly name: string;
  readonly value?: unknown;
  readonly valid?: number;
  readonly values?: readonly unknown[];
  readonly message: string;
  /** The schema node whose validator reported it: ratcheting looks at that node's value. */
  readonly origin: readonly Seg[];
}

type Kind = 'string' | 'integer' | 'number' | 'boolean' | 'array' | 'object';

function kindOf(v: unknown): Kind {
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'boolean';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  if (Array.isArray(v)) return 'array';
  return 'object';
}

function openApiName(segs: readonly Seg[]): string {
  let out = '';
  for (const s of segs) {
    if (typeof s === 'number') out += `[${s}]`;
    else out += `${out === '' ? '' : '.'}${typeof s === 'string' ? s : s.key}`;
  }
  return out;
}

function validateNode(s: Schema, data: unknown, segs: readonly Seg[], out: OpenApiError[]): void {
  const name = openApiName(segs);
  const types = s.intOrString ? ['integer', 'string'] : s.type ? [s.type] : [];
  const typeError = (typeName: string, value: string): OpenApiError => ({
    code: 'type',
    name,
    value,
    message: `${name} in body must be of type ${typeName}: ${goQuote(value)}`,
    origin: segs,
  });
  const enumCheck = (): void => {
    if (!s.enumValues || s.enumValues.length === 0) return;
    if (data !== null && data !== undefined && s.enumValues.some((e) => jsonEqual(e, data))) return;
    out.push({ code: 'enum', name, value: data, values: s.enumValues, message: '', origin: segs });
  };

  if (data === null || data === undefined) {
    if (types.length > 0 && !s.nullable) out.push(typeError(types.join(','), 'null'));
    enumCheck();
    return;
  }
  const kind = kindOf(data);

  if (types.length > 0 || s.format !== '') {
    const valueFormat = kind === 'integer' ? 'int64' : kind === 'number' ? 'float64' : '';
    const intAsNumber = kind === 'integer' && types.includes('number');
    const numeric = types.includes('number') || types.includes('integer');
    if (kind !== 'string' && kind !== 'array' && s.format !== '' && !(types.includes(kind) || valueFormat === s.format || intAsNumber)) {
      out.push(typeError(s.format, valueFormat));
    } else if (!(!numeric && s.format !== '' && (kind === 'string' || kind === 'array')) && !(types.includes(kind) || intAsNumber)) {
      out.push(typeError(types.join(','), kind));
    }
  }

  if (s.anyOf.length > 0) {
    let firstFailure: OpenApiError[] | undefined;
    let matched = false;
    for (const branch of s.anyOf) {
      const errs: OpenApiError[] = [];
      validateNode(branch, data, segs, errs);
      if (errs.length === 0) {
        matched = true;
        break;
      }
      firstFailure ??= errs;
    }
    if (!matched) {
      out.push({ code: 'composite', name, message: `${goQuote(name)} must validate at least one schema (anyOf)`, origin: segs });
      out.push(...(firstFailure ?? []));
    }
  }

  if (kind === 'string') {
    const str = data as string;
    const length = [...str].length;
    if (s.maxLength !== undefined && length > s.maxLength) {
      out.push({ code: 'tooLong', name, value: str, valid: s.maxLength, message: `${name} in body should be at most ${s.maxLength} chars long`, origin: segs });
    } else if (s.minLength !== undefined && length < s.minLength) {
      out.push({ code: 'other', name, value: str, message: `${name} in body should be at least ${s.minLength} chars long`, origin: segs });
    } else if (s.pattern && !s.pattern.regex.test(str)) {
      out.push({ code: 'other', name, value: str, message: `${name} in body should match '${s.pattern.source}'`, origin: segs });
    }
    const check = s.format === '' ? undefined : FORMATS.get(normalizeFormat(s.format));
    if (check && !check(str)) out.push(typeError(s.format, str));
  }

  if (kind === 'integer' || kind === 'number') {
    const n = data as number;
    if (s.maximum !== undefined && (s.exclusiveMaximum ? n >= s.maximum : n > s.maximum)) {
      const bound = kind === 'integer' ? Math.trunc(s.maximum) : s.maximum;
      const rel = s.exclusiveMaximum ? 'less than' : 'less than or equal to';
      out.push({ code: 'other', name, value: n, message: `${name} in body should be ${rel} ${goNumber(bound)}`, origin: segs });
    }
    if (s.minimum !== undefined && (s.exclusiveMinimum ? n <= s.minimum : n < s.minimum)) {
      const bound = kind === 'integer' ? Math.trunc(s.minimum) : s.minimum;
      const rel = s.exclusiveMinimum ? 'greater than' : 'greater than or equal to';
      out.push({ code: 'other', name, value: n, message: `${name} in body should be ${rel} ${goNumber(bound)}`, origin: segs });
    }
  }

  if (kind === 'array') {
    const list = data as unknown[];
    if (s.items) list.forEach((item, i) => validateNode(s.items as Schema, item, [...segs, i], out));
    if (s.minItems !== undefined && list.length < s.minItems) {
      out.push({ code: 'other', name, value: list.length, message: `${name} in body should have at least ${s.minItems} items`, origin: segs });
    }
    if (s.maxItems !== undefined && list.length > s.maxItems) {
      out.push({ code: 'maxItems', name, value: list.length, valid: s.maxItems, message: '', origin: segs });
    }
  }

  enumCheck();

  if (kind === 'object') {
    const map = data as Record<string, unknown>;
    const count = Object.keys(map).length;
    if (s.minProperties !== undefined && count < s.minProperties) {
      out.push({ code: 'other', name, value: count, message: `${name} in body should have at least ${s.minProperties} properties`, origin: segs });
    }
    if (s.maxProperties !== undefined && count > s.maxProperties) {
      out.push({ code: 'maxProperties', name, value: count, valid: s.maxProperties, message: '', origin: segs });
    }
    if (s.additionalProperties) {
      for (const [k, v] of Object.entries(map)) {
        if (!s.properties?.has(k)) validateNode(s.additionalProperties, v, [...segs, { key: k }], out);
      }
    }
    for (const [k, prop] of s.properties ?? []) {
      if (k in map) validateNode(prop, map[k], [...segs, k], out);
    }
    for (const k of s.required) {
      if (!(k in map)) out.push({ code: 'required', name: openApiName([...segs, k]), message: '', origin: segs });
    }
  }
}

/** kubeOpenAPIResultToFieldErrors: `prefix` is the field the validator started at (`status` for status writes). */
function openApiCause(e: OpenApiError, prefix: string | undefined): Cause {
  const field = prefix === undefined ? e.name || '<nil>' : e.name ? `${prefix}.${e.name}` : prefix;
  switch (e.code) {
    case 'required':
      return fieldError('FieldValueRequired', field, '', '');
    case 'enum': {
      const values = (e.values ?? []).map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
      return fieldError('FieldValueNotSupported', field, e.value ?? null, values.length > 0 ? `supported values: ${values.map(goQuote).join(', ')}` : '');
    }
    case 'tooLong':
      return fieldError('FieldValueTooLong', field, OMIT, `may not be more than ${e.valid ?? -1} bytes`);
    case 'maxItems':
    case 'maxProperties':
      return fieldError('FieldValueTooMany', field, e.value, `must have at most ${e.valid ?? -1} items`);
    case 'type':
      return fieldError('FieldValueTypeInvalid', field, e.value ?? '', e.message);
    case 'composite':
      return fieldError('FieldValueInvalid', prefix ?? '<nil>', '', e.message);
    case 'other':
      return fieldError('FieldValueInvalid', field, e.value ?? '', e.message);
  }
}

// ---------------------------------------------------------------------------------------
// x-kubernetes-list-type set and map (apiextensions-apiserver schema/listtype)
// ---------------------------------------------------------------------------------------

function listCauses(s: Schema, obj: unknown): Cause[] {
  const out: Cause[] = [];
  if (isObject(obj)) listsInObject(s, obj, [], out);
  return out;
}

function listsInObject(s: Schema, obj: Record<string, unknown>, at: Seg[], out: Cause[]): void {
  for (const [k, v] of Object.entries(obj)) {
    const prop = s.properties?.get(k);
    if (prop) listsIn(prop, v, [...at, k], out);
    else if (s.additionalProperties) listsIn(s.additionalProperties, v, [...at, { key: k }], out);
  }
}

function listsIn(s: Schema, v: unknown, at: Seg[], out: Cause[]): void {
  if (isObject(v)) {
    listsInObject(s, v, at, out);
    return;
  }
  if (!Array.isArray(v)) return;
  if (s.listType === 'set') {
    for (const i of repeatedIndices(v)) out.push(fieldError('FieldValueDuplicate', fieldPath([...at, i]), v[i], ''));
  } else if (s.listType === 'map') {
    const notObject = v.findIndex((x) => x !== null && !isObject(x));
    if (notObject >= 0) {
      out.push(fieldError('FieldValueInvalid', fieldPath([...at, notObject]), v[notObject], 'must be an object for an array of list-type map'));
    } else {
      const keys = v.map((x) => {
        const key: Record<string, unknown> = {};
        for (const k of s.listMapKeys) if (isObject(x) && k in x) key[k] = x[k];
        return key;
      });
      for (const i of repeatedIndices(keys)) out.push(fieldError('FieldValueDuplicate', fieldPath([...at, i]), keys[i], ''));
    }
  }
  if (s.items) v.forEach((item, i) => listsIn(s.items as Schema, item, [...at, i], out));
}

/** The index of each value's second occurrence (the apiserver reports each duplicated value once). */
function repeatedIndices(list: readonly unknown[]): number[] {
  const seen = new Map<string, number>();
  const out: number[] = [];
  list.forEach((x, i) => {
    const key = canonicalJson(x);
    const times = seen.get(key) ?? 0;
    if (times === 1) out.push(i);
    seen.set(key, times + 1);
  });
  return out;
}

// ---------------------------------------------------------------------------------------
// CEL validation (apiextensions-apiserver schema/cel/validation.go)
// ---------------------------------------------------------------------------------------

interface Ratchet {
  readonly root: Schema;
  readonly next: unknown;
  readonly old: unknown;
}

function celValidate(s: Schema, obj: unknown, oldObj: unknown, at: Seg[], ratchet: Ratchet | undefined, out: Cause[]): void {
  if (obj === null || obj === undefined) return;
  const old = oldObj === null ? undefined : oldObj;
  for (const rule of s.rules) {
    if (!rule.program) continue;
    if (rule.usesOldSelf && old === undefined && !rule.optionalOldSelf) continue;
    const field = fieldPath([...at, ...rule.fieldPath]);
    const vars: Record<string, unknown> = { self: toCel(obj, s) };
    if (rule.usesOldSelf) vars.oldSelf = rule.optionalOldSelf ? Optional.of(old === undefined ? undefined : toCel(old, s)) : toCel(old, s);
    let result: unknown;
    try {
      result = rule.program(vars);
    } catch (err) {
      if (!(err instanceof CelError)) throw err;
      const detail = err.message.startsWith('no such overload')
        ? `'${err.message}': call arguments did not match a supported operator, function or macro signature for rule: ${ruleErrorString(rule)}`
        : `${err.message} evaluating rule: ${ruleErrorString(rule)}`;
      out.push(fieldError('FieldValueInvalid', fieldPath(at), s.type, detail));
      continue;
    }
    if (result === true) continue;
    if (!rule.usesOldSelf && ratchet && unchanged(ratchet.root, ratchet.next, ratchet.old, at)) continue;
    let message = ruleMessageOrDefault(rule);
    if (rule.messageProgram) {
      try {
        const m = rule.messageProgram(vars);
        if (typeof m === 'string' && m.trim() !== '' && !m.includes('\n')) message = m;
      } catch (err) {
        if (!(err instanceof CelError)) throw err;
      }
    }
    switch (rule.reason) {
      case 'FieldValueForbidden':
        out.push(fieldError('FieldValueForbidden', field, '', message));
        break;
      case 'FieldValueRequired':
        out.push(fieldError('FieldValueRequired', field, '', message));
        break;
      case 'FieldValueDuplicate':
        out.push(fieldError('FieldValueDuplicate', field, s.type, ''));
        break;
      default:
        out.push(fieldError('FieldValueInvalid', field, s.type, message));
    }
  }
  if (Array.isArray(obj)) {
    if (!s.items) return;
    const oldList = Array.isArray(old) ? old : [];
    obj.forEach((item, i) => {
      const oldItem = s.listType === 'map' ? findByMapKeys(oldList, item, s.listMapKeys) : undefined;
      celValidate(s.items as Schema, item, oldItem, [...at, i], ratchet, out);
    });
  } else if (isObject(obj)) {
    const oldMap = isObject(old) ? old : {};
    for (const [k, v] of Object.entries(obj)) {
      const prop = s.properties?.get(k);
      if (prop) celValidate(prop, v, oldMap[k], [...at, k], ratchet, out);
      else if (s.additionalProperties) celValidate(s.additionalProperties, v, oldMap[k], [...at, { key: k }], ratchet, out);
    }
  }
}

function ruleErrorString(rule: Rule): string {
  return (rule.message ?? rule.rule).trim();
}

function ruleMessageOrDefault(rule: Rule): string {
  return rule.message === undefined ? `failed rule: ${ruleErrorString(rule)}` : rule.message.trim();
}

// ---------------------------------------------------------------------------------------
// Ratcheting (apiserver pkg/cel/common CorrelatedObject)
// ---------------------------------------------------------------------------------------

/**
 * Whether the value at `at` counts as unchanged for ratcheting: the deepest node on the
 * way there that correlates with the stored object (through object fields and list-type
 * map keys, never list indexes) is deep-equal to its stored value.
 */
function unchanged(root: Schema, next: unknown, old: unknown, at: readonly Seg[]): boolean {
  let s = root;
  let nv = next;
  let ov = old;
  for (const [depth, seg] of at.entries()) {
    // The apiserver does not correlate the root's kind and apiVersion.
    if (depth === 0 && (seg === 'kind' || seg === 'apiVersion')) break;
    if (typeof seg === 'number') {
      if (s.listType !== 'map' || !s.items || !Array.isArray(nv) || !Array.isArray(ov)) break;
      const item = nv[seg];
      const oldItem = findByMapKeys(ov, item, s.listMapKeys);
      if (oldItem === undefined || oldItem === null) break;
      s = s.items;
      nv = item;
      ov = oldItem;
    } else {
      const k = typeof seg === 'string' ? seg : seg.key;
      if (!isObject(nv) || !isObject(ov) || !(k in nv) || !(k in ov)) break;
      const sub = s.properties?.get(k) ?? s.additionalProperties;
      if (!sub) break;
      s = sub;
      nv = nv[k];
      ov = ov[k];
    }
  }
  return correlatedEqual(s, nv, ov);
}

function correlatedEqual(s: Schema | undefined, nv: unknown, ov: unknown): boolean {
  const nNil = nv === null || nv === undefined;
  const oNil = ov === null || ov === undefined;
  if (nNil || oNil) return nNil && oNil;
  if (Array.isArray(nv) !== Array.isArray(ov) || isObject(nv) !== isObject(ov)) return false;
  if (Array.isArray(nv) && Array.isArray(ov)) {
    if (nv.length !== ov.length) return false;
    if (s?.listType !== 'map' || !s.items) return jsonEqual(nv, ov);
    const items = s.items;
    return nv.every((item) => {
      const oldItem = findByMapKeys(ov, item, s.listMapKeys);
      return oldItem !== undefined && oldItem !== null && correlatedEqual(items, item, oldItem);
    });
  }
  if (isObject(nv) && isObject(ov)) {
    const keys = Object.keys(nv);
    if (keys.length !== Object.keys(ov).length) return false;
    return keys.every((k) => {
      const sub = s?.properties?.get(k) ?? s?.additionalProperties;
      return k in ov && sub !== undefined && correlatedEqual(sub, nv[k], ov[k]);
    });
  }
  return jsonEqual(nv, ov);
}

function findByMapKeys(list: readonly unknown[], item: unknown, keys: readonly string[]): unknown {
  if (!isObject(item)) return undefined;
  return list.find((x) => isObject(x) && keys.every((k) => jsonEqual(x[k], item[k])));
}

// ---------------------------------------------------------------------------------------
// Field errors as apimachinery's field.Error prints them
// ---------------------------------------------------------------------------------------

const OMIT = Symbol('omit value');

const LABELS: Readonly<Record<CauseReason, string>> = {
  FieldValueInvalid: 'Invalid value',
  FieldValueTypeInvalid: 'Invalid value',
  FieldValueRequired: 'Required value',
  FieldValueTooLong: 'Too long',
  FieldValueTooMany: 'Too many',
  FieldValueDuplicate: 'Duplicate value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueForbidden: 'Forbidden',
};

function fieldError(reason: CauseReason, field: string, value: unknown, detail: string): Cause {
  const label = LABELS[reason];
  const bare = reason === 'FieldValueRequired' || reason === 'FieldValueForbidden' || reason === 'FieldValueTooLong' || value === OMIT;
  let message = bare ? label : `${label}: ${goBadValue(value)}`;
  if (detail !== '') message += `: ${detail}`;
  return { reason, message, field };
}

/** field.Path.String(): `a.b[0][key]`, `<nil>` for the root. */
function fieldPath(segs: readonly Seg[]): string {
  if (segs.length === 0) return '<nil>';
  let out = '';
  for (const s of segs) {
    if (typeof s === 'number') out += `[${s}]`;
    else if (typeof s === 'string') out += `${out === '' ? '' : '.'}${s}`;
    else out += `[${s.key}]`;
  }
  return out;
}

/** How field.Error's ErrorBody prints a bad value (`%v` for numbers and bools, `%q` for strings, `%#v` otherwise). */
function goBadValue(v: unknown): string {
  if (v === null || v === undefined) return '"null"';
  if (typeof v === 'string') return goQuote(v);
  if (typeof v === 'number' || typeof v === 'boolean') return typeof v === 'number' ? goNumber(v) : String(v);
  return goSharpV(v);
}

function goSharpV(v: unknown): string {
  if (v === null || v === undefined) return 'interface {}(nil)';
  if (typeof v === 'string') return goQuote(v);
  if (typeof v === 'number') return goNumber(v);
  if (typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return `[]interface {}{${v.map(goSharpV).join(', ')}}`;
  const entries = Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `map[string]interface {}{${entries.map(([k, x]) => `${goQuote(k)}:${goSharpV(x)}`).join(', ')}}`;
}

/** JSON integers decode to int64 (printed plainly); others to float64, which Go's %v prints as shortest %g. */
function goNumber(v: number): string {
  if (Number.isInteger(v) && Math.abs(v) < 2 ** 63) return BigInt(v).toString();
  if (!Number.isFinite(v)) return Number.isNaN(v) ? 'NaN' : v > 0 ? '+Inf' : '-Inf';
  const [mantissa = '', expText = '0'] = v.toExponential().split('e');
  const exp = Number(expText);
  if (exp < -4 || exp >= 6) return `${mantissa}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  return String(v);
}

/** strconv.Quote. */
function goQuote(s: string): string {
  const escapes: Record<string, string> = { '"': '\\"', '\\': '\\\\', '\x07': '\\a', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\v': '\\v' };
  let out = '"';
  for (const ch of s) {
    const esc = escapes[ch];
    const c = ch.codePointAt(0) ?? 0;
    if (esc !== undefined) out += esc;
    else if (c === 0x20 || /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u.test(ch)) out += ch;
    else if (c < 0x20 || c === 0x7f) out += `\\x${c.toString(16).padStart(2, '0')}`;
    else if (c < 0x10000) out += `\\u${c.toString(16).padStart(4, '0')}`;
    else out += `\\U${c.toString(16).padStart(8, '0')}`;
  }
  return `${out}"`;
}

// ---------------------------------------------------------------------------------------
// Formats the apiserver checks (kube-openapi strfmt; apiextensions strips the rest)
// ---------------------------------------------------------------------------------------

const APISERVER_FORMATS = new Set([
  'bsonobjectid', 'uri', 'email', 'hostname', 'ipv4', 'ipv6', 'cidr', 'mac', 'uuid', 'uuid3', 'uuid4', 'uuid5',
  'isbn', 'isbn10', 'isbn13', 'creditcard', 'ssn', 'hexcolor', 'rgbcolor', 'byte', 'password', 'date', 'duration', 'datetime',
]);

function normalizeFormat(f: string): string {
  return f.replaceAll('-', '');
}

const HOSTNAME =
  /^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$/u;

const FORMATS: ReadonlyMap<string, (s: string) => boolean> = new Map<string, (s: string) => boolean>([
  ['ipv4', (s) => parseIpSloppy(s) !== undefined && s.includes('.')],
  ['ipv6', (s) => parseAddr(s) !== undefined && s.includes(':')],
  ['cidr', (s) => parseCidrSloppy(s)],
  ['hostname', (s) => HOSTNAME.test(s) && Buffer.byteLength(s) <= 255 && s.split('.').every((p) => Buffer.byteLength(p) <= 63)],
  ['uri', (s) => goUrlOrError(s, true) !== undefined],
  ['date', isGoDate],
  ['datetime', isDateTime],
  ['uuid', (s) => /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i.test(s)],
  ['uuid3', (s) => /^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i.test(s)],
  ['uuid4', (s) => /^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i.test(s)],
  ['uuid5', (s) => /^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i.test(s)],
  ['password', () => true],
]);

/** The format the apiserver will check, '' when it strips it; refuses a checked format this module lacks. */
function checkedFormat(format: string, at: string): string {
  const name = normalizeFormat(format);
  if (!APISERVER_FORMATS.has(name)) return '';
  if (!FORMATS.has(name)) throw new Error(`${at}: format "${format}" is checked by the apiserver but not implemented by crd-validate`);
  return format;
}

/** time.Parse("2006-01-02", s). */
function isGoDate(s: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) return false;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1];
  return days !== undefined && day >= 1 && day <= days;
}

/** strfmt.IsDateTime. */
function isDateTime(str: string): boolean {
  if (str.length < 4) return false;
  const parts = str.toLowerCase().split('t');
  if (parts.length < 2 || !isGoDate(parts[0] ?? '')) return false;
  const m = /^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$/.exec(parts[1] ?? '');
  return m !== null && (m[1] ?? '') <= '23' && (m[2] ?? '') <= '59' && (m[3] ?? '') <= '59';
}

// ---------------------------------------------------------------------------------------
// IP addresses: Go netip (CEL isIP/ip/isCIDR, format ipv6) and Go 1.16 net (formats ipv4, cidr)
// ---------------------------------------------------------------------------------------

/** netip.ParseAddr without zones: 4 or 16 bytes, or undefined. */
function parseAddr(s: string): number[] | undefined {
  const first = /[.:%]/.exec(s)?.[0];
  if (first === '.') return parseV4(s, true);
  if (first === ':') return s.includes('%') ? undefined : parseV6(s, true);
  return undefined;
}

/** Go 1.16 net.ParseIP, as k8s.io/utils/net.ParseIPSloppy keeps it: leading zeros allowed. */
function parseIpSloppy(s: string): number[] | undefined {
  const first = /[.:]/.exec(s)?.[0];
  if (first === '.') return parseV4(s, false);
  if (first === ':') return parseV6(s, false);
  return undefined;
}

function parseV4(s: string, strict: boolean): number[] | undefined {
  const fields = s.split('.');
  if (fields.length !== 4) return undefined;
  const out: number[] = [];
  for (const f of fields) {
    if (!/^[0-9]+$/.test(f)) return undefined;
    if (strict && f.length > 1 && f.startsWith('0')) return undefined;
    const n = Number(f);
    if (n > 255) return undefined;
    out.push(n);
  }
  return out;
}

function parseV6(input: string, strict: boolean): number[] | undefined {
  let s = input;
  const ip: number[] = new Array<number>(16).fill(0);
  let ellipsis = -1;
  if (s.startsWith('::')) {
    ellipsis = 0;
    s = s.slice(2);
    if (s === '') return ip;
  }
  let i = 0;
  while (i < 16) {
    const m = /^[0-9a-fA-F]+/.exec(s);
    const digits = m?.[0] ?? '';
    if (digits === '') return undefined;
    // netip allows at most 4 digits; Go 1.16 any number, as long as the value fits.
    if (strict && digits.length > 4) return undefined;
    const n = parseInt(digits, 16);
    if (n > 0xffff) return undefined;
    if (digits.length < s.length && s[digits.length] === '.') {
      if ((ellipsis < 0 && i !== 12) || i + 4 > 16) return undefined;
      const v4 = parseV4(s, strict);
      if (!v4) return undefined;
      ip.splice(i, 4, ...v4);
      i += 4;
      s = '';
      break;
    }
    ip[i] = n >> 8;
    ip[i + 1] = n & 0xff;
    i += 2;
    s = s.slice(digits.length);
    if (s === '') break;
    if (s[0] !== ':' || s.length === 1) return undefined;
    s = s.slice(1);
    if (s[0] === ':') {
      if (ellipsis >= 0) return undefined;
      ellipsis = i;
      s = s.slice(1);
      if (s === '') break;
    }
  }
  if (s !== '') return undefined;
  if (i < 16) {
    if (ellipsis < 0) return undefined;
    const n = 16 - i;
    for (let j = i - 1; j >= ellipsis; j--) ip[j + n] = ip[j] ?? 0;
    for (let j = ellipsis; j < ellipsis + n; j++) ip[j] = 0;
  } else if (ellipsis >= 0) {
    return undefined;
  }
  return ip;
}

function is4In6(ip: readonly number[]): boolean {
  return ip.length === 16 && ip.slice(0, 10).every((b) => b === 0) && ip[10] === 0xff && ip[11] === 0xff;
}

/** CEL isIP / ip(): netip.ParseAddr, refusing zones and IPv4-mapped IPv6. */
function celIp(s: string): number[] | undefined {
  const ip = parseAddr(s);
  return ip && !is4In6(ip) ? ip : undefined;
}

/** CEL isCIDR: netip.ParsePrefix, refusing IPv4-mapped IPv6. */
function celIsCidr(s: string): boolean {
  const slash = s.lastIndexOf('/');
  if (slash < 0) return false;
  const ip = parseAddr(s.slice(0, slash));
  const bits = s.slice(slash + 1);
  if (!ip || is4In6(ip) || !/^(0|[1-9][0-9]*)$/.test(bits)) return false;
  return Number(bits) <= ip.length * 8;
}

/** Go 1.16 net.ParseCIDR (k8s.io/utils/net.ParseCIDRSloppy). */
function parseCidrSloppy(s: string): boolean {
  const slash = s.indexOf('/');
  if (slash < 0) return false;
  const addr = s.slice(0, slash);
  const ip = parseV4(addr, false) ?? parseV6(addr, false);
  const mask = s.slice(slash + 1);
  if (!ip || !/^[0-9]+$/.test(mask)) return false;
  const bits = Number(mask);
  return bits < 0xffffff && bits <= (ip.length === 4 ? 32 : 128);
}

// ---------------------------------------------------------------------------------------
// URLs: Go net/url Parse and ParseRequestURI (CEL url/isURL, format uri)
// ---------------------------------------------------------------------------------------

interface GoUrl {
  readonly scheme: string;
  readonly host: string;
  readonly path: string;
  readonly rawPath: string;
}

type Enc = 'path' | 'host' | 'zone' | 'user' | 'fragment';

class UrlError extends Error {}

/** Go's algorithms work on bytes: strings here hold one UTF-8 byte per char. */
function toBytes(s: string): string {
  return Buffer.from(s, 'utf8').toString('latin1');
}

function fromBytes(s: string): string {
  return Buffer.from(s, 'latin1').toString('utf8');
}

function isAlnum(c: string): boolean {
  return /^[A-Za-z0-9]$/.test(c);
}

function shouldEscape(c: string, mode: Enc): boolean {
  if (isAlnum(c)) return false;
  if ((mode === 'host' || mode === 'zone') && `!$&'()*+,;=:[]<>"`.includes(c)) return false;
  if ('-_.~'.includes(c)) return false;
  if ('$&+,/:;=?@'.includes(c)) {
    if (mode === 'path') return c === '?';
    if (mode === 'user') return '@/?:'.includes(c);
    if (mode === 'fragment') return false;
  }
  if (mode === 'fragment' && '!()*'.includes(c)) return false;
  return true;
}

function unescapeGo(s: string, mode: Enc): string {
  for (let i = 0; i < s.length; ) {
    const c = s[i] ?? '';
    if (c === '%') {
      const hex = s.slice(i + 1, i + 3);
      if (!/^[0-9a-fA-F]{2}$/.test(hex)) throw new UrlError(`invalid URL escape ${goQuote(s.slice(i, i + 3))}`);
      const v = parseInt(hex, 16);
      if (mode === 'host' && v < 0x80 && s.slice(i, i + 3) !== '%25') throw new UrlError(`invalid URL escape ${goQuote(s.slice(i, i + 3))}`);
      if (mode === 'zone' && s.slice(i, i + 3) !== '%25' && v !== 0x20 && shouldEscape(String.fromCharCode(v), 'host')) {
        throw new UrlError(`invalid URL escape ${goQuote(s.slice(i, i + 3))}`);
      }
      i += 3;
    } else {
      if ((mode === 'host' || mode === 'zone') && c.charCodeAt(0) < 0x80 && shouldEscape(c, mode)) {
        throw new UrlError(`invalid character ${goQuote(c)} in host name`);
      }
      i++;
    }
  }
  return s.replace(/%([0-9a-fA-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
}

function escapeGo(s: string, mode: Enc): string {
  let out = '';
  for (const c of s) out += shouldEscape(c, mode) ? `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}` : c;
  return out;
}

function parseHost(host: string): string {
  const validPort = (p: string): boolean => p === '' || /^:[0-9]*$/.test(p);
  if (host.startsWith('[')) {
    const i = host.lastIndexOf(']');
    if (i < 0) throw new UrlError("missing ']' in host");
    const colonPort = host.slice(i + 1);
    if (!validPort(colonPort)) throw new UrlError(`invalid port ${goQuote(colonPort)} after host`);
    const zone = host.slice(0, i).indexOf('%25');
    if (zone >= 0) {
      return unescapeGo(host.slice(0, zone), 'host') + unescapeGo(host.slice(zone, i), 'zone') + unescapeGo(host.slice(i), 'host');
    }
  } else {
    const i = host.lastIndexOf(':');
    if (i >= 0 && !validPort(host.slice(i))) throw new UrlError(`invalid port ${goQuote(host.slice(i))} after host`);
  }
  return unescapeGo(host, 'host');
}

function parseUrlBytes(raw: string, viaRequest: boolean): GoUrl {
  if (/[\x00-\x1f\x7f]/.test(raw)) throw new UrlError('net/url: invalid control character in URL');
  if (raw === '' && viaRequest) throw new UrlError('empty url');
  if (raw === '*') return { scheme: '', host: '', path: '*', rawPath: '' };
  let scheme = '';
  let rest = raw;
  const sm = /^([A-Za-z][A-Za-z0-9+.-]*)?(:)?/.exec(raw);
  if (raw.startsWith(':')) throw new UrlError('missing protocol scheme');
  if (sm?.[1] !== undefined && sm[2] === ':') {
    scheme = sm[1].toLowerCase();
    rest = raw.slice(sm[0].length);
  }
  if (rest.endsWith('?') && rest.split('?').length === 2) rest = rest.slice(0, -1);
  else if (rest.includes('?')) rest = rest.slice(0, rest.indexOf('?'));
  if (!rest.startsWith('/')) {
    if (scheme !== '') return { scheme, host: '', path: '', rawPath: '' };
    if (viaRequest) throw new UrlError('invalid URI for request');
    if ((rest.split('/')[0] ?? '').includes(':')) throw new UrlError('first path segment in URL cannot contain colon');
  }
  let host = '';
  if ((scheme !== '' || (!viaRequest && !rest.startsWith('///'))) && rest.startsWith('//')) {
    let authority = rest.slice(2);
    rest = '';
    const slash = authority.indexOf('/');
    if (slash >= 0) {
      rest = authority.slice(slash);
      authority = authority.slice(0, slash);
    }
    const at = authority.lastIndexOf('@');
    host = parseHost(authority.slice(at + 1));
    if (at >= 0) {
      const userinfo = authority.slice(0, at);
      if (!/^[A-Za-z0-9\-._:~!$&'()*+,;=%@]*$/.test(userinfo)) throw new UrlError('net/url: invalid userinfo');
      const colon = userinfo.indexOf(':');
      for (const part of colon < 0 ? [userinfo] : [userinfo.slice(0, colon), userinfo.slice(colon + 1)]) unescapeGo(part, 'user');
    }
  }
  const path = unescapeGo(rest, 'path');
  return { scheme, host, path, rawPath: escapeGo(path, 'path') === rest ? '' : rest };
}

/** url.ParseRequestURI (request) or url.Parse; undefined when Go refuses the text. */
function goUrlOrError(text: string, request: boolean): GoUrl | undefined {
  try {
    return goUrl(text, request);
  } catch (err) {
    if (err instanceof UrlError) return undefined;
    throw err;
  }
}

function goUrl(text: string, request: boolean): GoUrl {
  const raw = toBytes(text);
  if (request) return parseUrlBytes(raw, true);
  const hash = raw.indexOf('#');
  const url = parseUrlBytes(hash < 0 ? raw : raw.slice(0, hash), false);
  if (hash >= 0) unescapeGo(raw.slice(hash + 1), 'fragment');
  return url;
}

/** URL.EscapedPath. */
function escapedPath(u: GoUrl): string {
  if (u.rawPath !== '' && validEncodedPath(u.rawPath)) {
    try {
      if (unescapeGo(u.rawPath, 'path') === u.path) return fromBytes(u.rawPath);
    } catch (err) {
      if (!(err instanceof UrlError)) throw err;
    }
  }
  if (u.path === '*') return '*';
  return fromBytes(escapeGo(u.path, 'path'));
}

function validEncodedPath(s: string): boolean {
  return [...s].every((c) => `!$&'()*+,;=:@[]%`.includes(c) || !shouldEscape(c, 'path'));
}

// ---------------------------------------------------------------------------------------
// RE2 patterns as JavaScript regexes
// ---------------------------------------------------------------------------------------

const regexCache = new Map<string, RegExp | undefined>();

/** Translates the RE2 syntax these CRDs use; undefined when it cannot be done faithfully. */
function re2(pattern: string): RegExp | undefined {
  if (regexCache.has(pattern)) return regexCache.get(pattern);
  let source = pattern;
  let flags = 'u';
  const inline = /^\(\?([ims]+)\)/.exec(source);
  if (inline) {
    flags += inline[1] ?? '';
    source = source.slice(inline[0].length);
  }
  let regex: RegExp | undefined;
  if (!/\\[AzQEC]|\(\?P?<|\[\[:|\(\?[a-zA-Z]/.test(source)) {
    try {
      regex = new RegExp(source, flags);
    } catch {
      regex = undefined;
    }
  }
  regexCache.set(pattern, regex);
  return regex;
}

// ---------------------------------------------------------------------------------------
// CEL: @marcbachmann/cel-js, with the Kubernetes library functions these CRDs call
// ---------------------------------------------------------------------------------------

/** A rule cel-js cannot parse or type-check, or an evaluation error (its message is cel-js's). */
export class CelError extends Error {}

/** The Kubernetes CEL library's net.IP. */
class CelIp {
  constructor(readonly bytes: readonly number[]) {}
}

/** The Kubernetes CEL library's net.URL. */
class CelUrl {
  constructor(readonly url: GoUrl) {}
}

const celEnv = new Environment({ enableOptionalTypes: true, homogeneousAggregateLiterals: false })
  .registerVariable('self', 'dyn')
  .registerVariable('oldSelf', 'dyn')
  .registerType('net.IP', CelIp)
  .registerType('net.URL', CelUrl)
  // cel-js has only the receiver form; RE2 syntax as the schema's `pattern` takes it.
  .registerFunction('matches(string, string): bool', (text: string, pattern: string) => {
    const regex = re2(pattern);
    if (!regex) throw new CelError(`invalid regex ${goQuote(pattern)}`);
    return regex.test(text);
  })
  .registerFunction('isIP(string): bool', (s: string) => celIp(s) !== undefined)
  .registerFunction('ip(string): net.IP', (s: string) => {
    const ip = celIp(s);
    if (!ip) throw new CelError(`IP Address ${goQuote(s)} parse error during conversion from string`);
    return new CelIp(ip);
  })
  .registerFunction('net.IP.family(): int', (ip: CelIp) => (ip.bytes.length === 4 ? 4n : 6n))
  .registerFunction('isCIDR(string): bool', (s: string) => celIsCidr(s))
  .registerFunction('isURL(string): bool', (s: string) => goUrlOrError(s, true) !== undefined)
  .registerFunction('url(string): net.URL', (s: string) => {
    try {
      goUrl(s, true);
      return new CelUrl(goUrl(s, false));
    } catch (err) {
      if (!(err instanceof UrlError)) throw err;
      throw new CelError(`URL parse error during conversion from string: parse ${goQuote(s)}: ${err.message}`);
    }
  })
  .registerFunction('net.URL.getScheme(): string', (u: CelUrl) => fromBytes(u.url.scheme))
  .registerFunction('net.URL.getHost(): string', (u: CelUrl) => fromBytes(u.url.host))
  .registerFunction('net.URL.getEscapedPath(): string', (u: CelUrl) => escapedPath(u.url));

type CelProgram = (vars: Record<string, unknown>) => unknown;

/** Parses and type-checks a rule against the functions registered above. */
function compileCel(src: string): CelProgram {
  let parsed;
  try {
    parsed = celEnv.parse(src);
  } catch (err) {
    throw celError(err);
  }
  const checked = parsed.check();
  if (!checked.valid) throw new CelError(checked.error?.message ?? `cannot type-check ${src}`);
  return (vars) => {
    try {
      return parsed(vars);
    } catch (err) {
      throw celError(err);
    }
  };
}

function celError(err: unknown): Error {
  if (err instanceof CelError) return err;
  if (err instanceof ParseError || err instanceof EvaluationError || err instanceof CelTypeError) {
    // cel-js wraps a handler's error; its message is what cel-go would print.
    const cause = (err as Error & { cause?: unknown }).cause;
    return new CelError(cause instanceof CelError ? cause.message : err.message.split('\n')[0] ?? err.message);
  }
  return err as Error;
}

/**
 * A JSON value as the apiserver's CEL adapter shows it: integers (by the schema, or by value
 * where there is none) are CEL ints, other numbers doubles; an object's null and unknown
 * fields are absent.
 */
function toCel(v: unknown, s: Schema | undefined): unknown {
  if (v === null || v === undefined) return null;
  if (typeof v === 'number') return (s ? s.type === 'integer' : Number.isInteger(v)) ? BigInt(v) : v;
  if (typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map((x) => toCel(x, s?.items));
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    if (s?.properties) {
      const prop = s.properties.get(k);
      if (prop && x !== null) out[k] = toCel(x, prop);
    } else {
      out[k] = toCel(x, s?.additionalProperties);
    }
  }
  return out;
}

function fromCel(v: unknown): unknown {
  if (typeof v === 'bigint') return Number(v);
  if (Array.isArray(v)) return v.map(fromCel);
  if (v instanceof Map) return Object.fromEntries([...v].map(([k, x]) => [k, fromCel(x)]));
  if (v instanceof CelIp || v instanceof CelUrl || v instanceof Optional) throw new CelError('result is not a JSON value');
  if (isObject(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, fromCel(x)]));
  return v;
}

/**
 * Evaluates a CEL expression against plain JSON values (objects are maps; no schema).
 * Throws CelError for what does not parse or type-check and for evaluation errors.
 */
export function evaluateCel(expression: string, vars: { self?: unknown; oldSelf?: unknown }): unknown {
  const bound: Record<string, unknown> = {};
  if ('self' in vars) bound.self = toCel(vars.self, undefined);
  if ('oldSelf' in vars) bound.oldSelf = toCel(vars.oldSelf, undefined);
  return fromCel(compileCel(expression)(bound));
}

// ---------------------------------------------------------------------------------------
// JSON helpers
// ---------------------------------------------------------------------------------------

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function asObject(v: unknown, what: string): Record<string, unknown> {
  if (!isObject(v)) throw new Error(`${what} is not an object`);
  return v;
}

function asArray(v: unknown, what: string): unknown[] {
  if (!Array.isArray(v)) throw new Error(`${what} is not a list`);
  return v;
}

function join(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (isObject(v)) {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(v[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

function jsonEqual(a: unknown, b: unknown): boolean {
  return canonicalJson(a) === canonicalJson(b);
}
