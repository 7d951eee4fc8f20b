/**
 * A Kubernetes API server for tests: real HTTP on 127.0.0.1, an in-memory store, and the
 * protocol details `@kubernetes/client-node` depends on (list resourceVersions, chunked
 * watches with replay and 410 Expired, status subresources, the three patch types,
 * resourceVersion preconditions, RBAC and Status bodies worded like kube-apiserver's).
 * Tests also get direct store access, a request log and failure injection.
 *
 * Not modelled: server-side apply, strategic merge semantics (treated as merge patch:
 * lists are replaced, never merged by key), finalizers and graceful deletion, namespace
 * existence, managedFields.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { gzipSync } from 'node:zlib';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { dump as toYaml } from 'js-yaml';

const GZIP_THRESHOLD_BYTES = 128 * 1024;

/** `gzip` among the codings of an Accept-Encoding header, and not refused with `q=0`. */
/** An answer's body as sent: gzipped or not, as the client asked. */
interface Encoded {
  readonly body: string | Buffer;
  readonly gzip: boolean;
}

function acceptsGzip(header: string | undefined): boolean {
  return (header ?? '').split(',').some((coding) => {
    const [name, ...params] = coding.split(';').map((part) => part.trim().toLowerCase());
    return name === 'gzip' && !params.some((p) => /^q=0(\.0*)?$/.test(p));
  });
}

// ---------------------------------------------------------------------------------------
// Resource table

export interface ResourceType {
  /** '' for the core group. */
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly kind: string;
  readonly namespaced: boolean;
  /** Has a `/status` subresource: the main resource ignores status changes, `/status` keeps only them. */
  readonly hasStatus: boolean;
  /** Served from a CustomResourceDefinition: refuses strategic merge patch, PUT must carry a resourceVersion. */
  readonly custom: boolean;
  /** Writes maintain `metadata.generation` (bumped when anything but metadata and status changes). */
  readonly generation: boolean;
  /** DELETE answers with the deleted object rather than a Success Status. */
  readonly deleteReturnsObject: boolean;
  /** POST keeps a status the client sent (kubelets register their Node with status) instead of dropping it. */
  readonly statusOnCreate: boolean;
}

type ResourceFlags = Partial<Omit<ResourceType, 'group' | 'version' | 'plural' | 'kind'>>;

/** One table line: `apiVersion` is `v1` or `group/version`; custom resources default to CRD behaviour. */
export function resourceType(apiVersion: string, plural: string, kind: string, flags: ResourceFlags = {}): ResourceType {
  const slash = apiVersion.indexOf('/');
  const group = slash < 0 ? '' : apiVersion.slice(0, slash);
  const custom = flags.custom ?? group.includes('.');
  return {
    group,
    version: slash < 0 ? apiVersion : apiVersion.slice(slash + 1),
    plural,
    kind,
    namespaced: flags.namespaced ?? false,
    hasStatus: flags.hasStatus ?? false,
    custom,
    generation: flags.generation ?? custom,
    deleteReturnsObject: flags.deleteReturnsObject ?? false,
    statusOnCreate: flags.statusOnCreate ?? false,
  };
}

const RESOURCE_TYPES: readonly ResourceType[] = [
  resourceType('v1', 'services', 'Service', { namespaced: true, hasStatus: true, generation: true, deleteReturnsObject: true }),
  resourceType('v1', 'configmaps', 'ConfigMap', { namespaced: true }),
  resourceType('v1', 'nodes', 'Node', { hasStatus: true, statusOnCreate: true }),
  resourceType('v1', 'events', 'Event', { namespaced: true }),
  resourceType('config.openshift.io/v1', 'infrastructures', 'Infrastructure', { hasStatus: true }),
  resourceType('config.openshift.io/v1', 'dnses', 'DNS', { hasStatus: true }),
  resourceType('ingress.operator.openshift.io/v1', 'dnsrecords', 'DNSRecord', { namespaced: true, hasStatus: true }),
];

const apiVersionOf = (rt: ResourceType): string => (rt.group ? `${rt.group}/${rt.version}` : rt.version);
/** `services`, `infrastructures.config.openshift.io`: how kube-apiserver names a resource in messages. */
const qualifiedResource = (rt: ResourceType): string => (rt.group ? `${rt.plural}.${rt.group}` : rt.plural);

// ---------------------------------------------------------------------------------------
// Objects and Status bodies

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  [key: string]: unknown;
}

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  [key: string]: unknown;
}

/** An object as the store holds it: identity and system metadata always set. */
export interface StoredObject extends KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta & { name: string; uid: string; resourceVersion: string; creationTimestamp: string };
}

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface KubeStatus {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure' | 'Success';
  message?: string;
  reason?: string;
  details?: StatusDetails;
  code: number;
}

/** A request the server refuses; the direct store methods throw it too. */
export class StatusError extends Error {
  constructor(readonly status: KubeStatus) {
    super(status.message ?? status.reason ?? `HTTP ${status.code}`);
    this.name = 'StatusError';
  }
}

function failure(code: number, reason: string, message: string, details?: StatusDetails): StatusError {
  return new StatusError({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, details, code });
}

const resourceDetails = (rt: ResourceType, name: string): StatusDetails => ({
  name: name || undefined,
  group: rt.group || undefined,
  kind: rt.plural,
});

const notFound = (rt: ResourceType, name: string) =>
  failure(404, 'NotFound', `${qualifiedResource(rt)} "${name}" not found`, resourceDetails(rt, name));
const alreadyExists = (rt: ResourceType, name: string) =>
  failure(409, 'AlreadyExists', `${qualifiedResource(rt)} "${name}" already exists`, resourceDetails(rt, name));
const conflict = (rt: ResourceType, name: string, why: string) =>
  failure(409, 'Conflict', `Operation cannot be fulfilled on ${qualifiedResource(rt)} "${name}": ${why}`, resourceDetails(rt, name));
const MODIFIED_CONFLICT = 'the object has been modified; please apply your changes to the latest version and try again';
const badRequest = (message: string) => failure(400, 'BadRequest', message);
const pathNotFound = () => failure(404, 'NotFound', 'the server could not find the requested resource', {});
const methodNotAllowed = () =>
  failure(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource', {});
const unauthorized = () => failure(401, 'Unauthorized', 'Unauthorized');
const expired = (message: string) => failure(410, 'Expired', message);
const internalError = (message: string) =>
  failure(500, 'InternalError', `Internal error occurred: ${message}`, { causes: [{ message }] });
// What kube-apiserver answers when a JSON patch cannot be applied (a failed `test`, a missing path).
const patchNotApplied = () => failure(422, 'Invalid', 'the server rejected our request due to an error in our request', {});

/**
 * kube-apiserver's NewInvalid: one cause is quoted bare, several go in brackets. `kind` is the
 * Kind for validation failures, but the resource for the store's own resourceVersion check.
 */
function invalid(rt: ResourceType, name: string, causes: readonly ValidationCause[], kind = rt.kind): StatusError {
  const messages = [...new Set(causes.map((c) => `${c.field}: ${c.message}`))];
  const aggregate = messages.length === 1 ? messages[0] : `[${messages.join(', ')}]`;
  const qualified = rt.group ? `${kind}.${rt.group}` : kind;
  return failure(422, 'Invalid', `${qualified} "${name}" is invalid: ${aggregate}`, {
    name: name || undefined,
    group: rt.group || undefined,
    kind,
    causes: causes.map((c) => ({ reason: c.reason, message: c.message, field: c.field || undefined })),
  });
}

function unsupportedMediaType(rt: ResourceType): StatusError {
  const accepted = ['application/json-patch+json', 'application/merge-patch+json'];
  if (!rt.custom) accepted.push('application/strategic-merge-patch+json');
  return failure(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`,
  );
}

/** The Status a real server would send for `code` on this request, for failure injection. */
function injectedFailure(code: number, attrs: RequestAttributes, rt: ResourceType | undefined, user: string): StatusError {
  const name = attrs.resourceRequest ? attrs.name : '';
  switch (code) {
    case 401:
      return unauthorized();
    case 403:
      return forbidden(attrs, user);
    case 404:
      return rt && name ? notFound(rt, name) : pathNotFound();
    case 409:
      return rt && name ? conflict(rt, name, MODIFIED_CONFLICT) : failure(409, 'Conflict', 'the server reported a conflict');
    case 422:
      return patchNotApplied();
    case 429:
      return failure(429, 'TooManyRequests', 'Too many requests, please try again later.', { retryAfterSeconds: 1 });
    case 500:
      return internalError('injected by the test');
    case 503:
      return failure(503, 'ServiceUnavailable', 'the server is currently unable to handle the request');
    case 504:
      return failure(504, 'Timeout', 'Timeout: request did not complete within the allowed duration');
    default:
      return failure(code, 'Unknown', `the server responded with the status code ${code} but did not return more information`);
  }
}

// ---------------------------------------------------------------------------------------
// Request attributes and RBAC (pure)

export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection';

/** What kube-apiserver's RequestInfoFactory derives from a resource request; '' where absent. */
export interface ResourceAttributes {
  readonly resourceRequest: true;
  readonly verb: Verb;
  readonly apiGroup: string;
  readonly apiVersion: string;
  readonly resource: string;
  readonly subresource: string;
  readonly namespace: string;
  readonly name: string;
  readonly path: string;
}

export interface NonResourceAttributes {
  readonly resourceRequest: false;
  /** The lower-case HTTP method, as RBAC sees non-resource requests. */
  readonly verb: string;
  readonly path: string;
}

export type RequestAttributes = ResourceAttributes | NonResourceAttributes;

const METHOD_VERBS: Readonly<Record<string, Verb>> = {
  GET: 'get',
  HEAD: 'get',
  POST: 'create',
  PUT: 'update',
  PATCH: 'patch',
  DELETE: 'delete',
};

// Go's strconv.ParseBool, which decodes the `watch` query parameter.
const isTrue = (value: string | null): boolean => value !== null && ['1', 't', 'T', 'true', 'TRUE', 'True'].includes(value);

/** The name a field selector pins with `metadata.name=` or `==`, which RBAC resourceNames then see. */
function selectedName(fieldSelector: string | null): string {
  for (const term of splitTopLevel(fieldSelector ?? '')) {
    const m = /^metadata\.name\s*==?\s*(.*)$/.exec(term.trim());
    if (m?.[1] && !m[1].includes('/') && m[1] !== '.' && m[1] !== '..') return m[1];
  }
  return '';
}

/**
 * Derives RBAC attributes from a request the way kube-apiserver does: verb from the method
 * (collection GET → list or watch, collection DELETE → deletecollection, `/watch/` prefix →
 * watch), API group, resource, subresource, namespace, and name (for list/watch also from a
 * `metadata.name` field selector).
 */
export function requestAttributes(method: string, url: string): RequestAttributes {
  return parseRequest(method, url).attributes;
}

/** The attributes, and the object name the path itself carries (a selector's name is not one). */
function parseRequest(method: string, url: string): { attributes: RequestAttributes; pathName: string } {
  const parsed = new URL(url, 'http://127.0.0.1');
  const path = parsed.pathname;
  const nonResource = { attributes: { resourceRequest: false, verb: method.toLowerCase(), path } as const, pathName: '' };
  let segments: string[];
  try {
    segments = path.split('/').filter((s) => s !== '').map(decodeURIComponent);
  } catch {
    return nonResource;
  }
  let apiGroup: string;
  let apiVersion: string;
  let parts: string[];
  if (segments[0] === 'api' && segments.length >= 3) {
    apiGroup = '';
    apiVersion = segments[1] ?? '';
    parts = segments.slice(2);
  } else if (segments[0] === 'apis' && segments.length >= 4) {
    apiGroup = segments[1] ?? '';
    apiVersion = segments[2] ?? '';
    parts = segments.slice(3);
  } else {
    return nonResource;
  }
  let verb = METHOD_VERBS[method.toUpperCase()];
  if (verb === undefined) return nonResource;
  if (parts[0] === 'watch') {
    if (parts.length < 2) return nonResource;
    verb = 'watch';
    parts = parts.slice(1);
  }
  let namespace = '';
  if (parts[0] === 'namespaces' && parts.length > 1) {
    namespace = parts[1] ?? '';
    if (parts.length > 2 && parts[2] !== 'status' && parts[2] !== 'finalize') parts = parts.slice(2);
  }
  const resource = parts[0] ?? '';
  const pathName = parts[1] ?? '';
  const subresource = parts[2] ?? '';
  let name = pathName;
  if (name === '' && verb === 'get') {
    verb = isTrue(parsed.searchParams.get('watch')) ? 'watch' : 'list';
    name = selectedName(parsed.searchParams.get('fieldSelector'));
  }
  if (name === '' && verb === 'delete') verb = 'deletecollection';
  return {
    attributes: { resourceRequest: true, verb, apiGroup, apiVersion, resource, subresource, namespace, name, path },
    pathName,
  };
}

/** One rule of a (Cluster)Role. */
export interface PolicyRule {
  readonly verbs: readonly string[];
  readonly apiGroups?: readonly string[];
  readonly resources?: readonly string[];
  readonly resourceNames?: readonly string[];
  readonly nonResourceURLs?: readonly string[];
  /** Set for a Role's rule: a RoleBinding grants it only for requests in its own namespace. */
  readonly namespace?: string;
}

/** RBAC's RuleAllows over a set of rules: true when any rule grants the request. */
export function rulesAllow(rules: readonly PolicyRule[], attrs: RequestAttributes): boolean {
  return rules.some((rule) => {
    const verbOk = rule.verbs.includes('*') || rule.verbs.includes(attrs.verb);
    if (!verbOk) return false;
    if (rule.namespace !== undefined && (!attrs.resourceRequest || attrs.namespace !== rule.namespace)) return false;
    if (!attrs.resourceRequest) {
      return (rule.nonResourceURLs ?? []).some(
        (u) => u === '*' || u === attrs.path || (u.endsWith('*') && attrs.path.startsWith(u.slice(0, -1))),
      );
    }
    const groups = rule.apiGroups ?? [];
    if (!groups.includes('*') && !groups.includes(attrs.apiGroup)) return false;
    const combined = attrs.subresource ? `${attrs.resource}/${attrs.subresource}` : attrs.resource;
    const resourceOk = (rule.resources ?? []).some(
      (r) => r === '*' || r === combined || (attrs.subresource !== '' && r === `*/${attrs.subresource}`),
    );
    if (!resourceOk) return false;
    const names = rule.resourceNames ?? [];
    return names.length === 0 || names.includes(attrs.name);
  });
}

/** RBAC's denial, worded like kube-apiserver's authorization filter. */
function forbidden(attrs: RequestAttributes, user: string): StatusError {
  if (!attrs.resourceRequest) {
    return failure(403, 'Forbidden', `forbidden: User "${user}" cannot ${attrs.verb} path "${attrs.path}"`, {});
  }
  const resource = attrs.subresource ? `${attrs.resource}/${attrs.subresource}` : attrs.resource;
  const scope = attrs.namespace ? `in the namespace "${attrs.namespace}"` : 'at the cluster scope';
  const why = `User "${user}" cannot ${attrs.verb} resource "${resource}" in API group "${attrs.apiGroup}" ${scope}`;
  const subject = attrs.apiGroup ? `${attrs.resource}.${attrs.apiGroup}` : attrs.resource;
  const head = attrs.name ? `${subject} "${attrs.name}"` : subject;
  return failure(403, 'Forbidden', `${head} is forbidden: ${why}`, {
    name: attrs.name || undefined,
    group: attrs.apiGroup || undefined,
    kind: attrs.resource,
  });
}

// ---------------------------------------------------------------------------------------
// Selectors

type Predicate = (obj: StoredObject) => boolean;

/** Splits on commas outside parentheses (`a in (x,y),b`). */
function splitTopLevel(selector: string): string[] {
  const terms: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of selector) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      terms.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  if (current.trim() !== '' || terms.length > 0) terms.push(current);
  return terms.map((t) => t.trim()).filter((t) => t !== '');
}

function parseLabelSelector(selector: string): Predicate {
  const requirements = splitTopLevel(selector).map((term): ((labels: Record<string, string>) => boolean) => {
    let m = /^([^\s!=(),]+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(term);
    if (m) {
      const key = m[1] ?? '';
      const values = (m[3] ?? '').split(',').map((v) => v.trim());
      return m[2] === 'in'
        ? (labels) => key in labels && values.includes(labels[key] ?? '')
        : (labels) => !(key in labels) || !values.includes(labels[key] ?? '');
    }
    m = /^([^\s!=(),]+)\s*(!=|==|=)\s*([^\s!=(),]*)$/.exec(term);
    if (m) {
      const key = m[1] ?? '';
      const value = m[3] ?? '';
      return m[2] === '!=' ? (labels) => labels[key] !== value : (labels) => labels[key] === value;
    }
    m = /^(!?)([^\s!=(),]+)$/.exec(term);
    if (m) {
      const key = m[2] ?? '';
      return m[1] === '!' ? (labels) => !(key in labels) : (labels) => key in labels;
    }
    throw badRequest(`unable to parse requirement: found '${term}', expected: a valid label selector`);
  });
  return (obj) => requirements.every((req) => req(obj.metadata.labels ?? {}));
}

function parseFieldSelector(selector: string): Predicate {
  const requirements = splitTopLevel(selector).map((term): Predicate => {
    const m = /^([^\s!=]+)\s*(!=|==|=)\s*(.*)$/.exec(term);
    if (!m) throw badRequest(`invalid selector: '${selector}'; can't understand '${term}'`);
    const field = m[1] ?? '';
    const value = m[3] ?? '';
    const read =
      field === 'metadata.name'
        ? (obj: StoredObject) => obj.metadata.name
        : field === 'metadata.namespace'
          ? (obj: StoredObject) => obj.metadata.namespace ?? ''
          : undefined;
    if (!read) throw badRequest(`field label not supported: ${field}`);
    return m[2] === '!=' ? (obj) => read(obj) !== value : (obj) => read(obj) === value;
  });
  return (obj) => requirements.every((req) => req(obj));
}

// ---------------------------------------------------------------------------------------
// Patches

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const clone = <T>(v: T): T => structuredClone(v);

/** RFC 7386 JSON merge patch. */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return clone(patch);
  const result: Record<string, unknown> = isPlainObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}

class PatchNotApplied extends Error {}

function parsePointer(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw new PatchNotApplied(`invalid JSON pointer ${pointer}`);
  return pointer
    .slice(1)
    .split('/')
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

const ARRAY_INDEX = /^(0|[1-9][0-9]*)$/;

function resolve(root: unknown, tokens: readonly string[]): { found: boolean; value: unknown } {
  let node = root;
  for (const token of tokens) {
    if (Array.isArray(node) && ARRAY_INDEX.test(token) && Number(token) < node.length) node = node[Number(token)];
    else if (isPlainObject(node) && Object.hasOwn(node, token)) node = node[token];
    else return { found: false, value: undefined };
  }
  return { found: true, value: node };
}

function container(root: unknown, tokens: readonly string[], pointer: string): { parent: unknown; key: string } {
  const parent = resolve(root, tokens.slice(0, -1));
  if (!parent.found || (typeof parent.value !== 'object' || parent.value === null)) {
    throw new PatchNotApplied(`doc is missing path: ${pointer}`);
  }
  return { parent: parent.value, key: tokens[tokens.length - 1] ?? '' };
}

function addAt(root: unknown, pointer: string, value: unknown): unknown {
  const tokens = parsePointer(pointer);
  if (tokens.length === 0) return value;
  const { parent, key } = container(root, tokens, pointer);
  if (Array.isArray(parent)) {
    if (key === '-') parent.push(value);
    else if (ARRAY_INDEX.test(key) && Number(key) <= parent.length) parent.splice(Number(key), 0, value);
    else throw new PatchNotApplied(`add operation does not apply: index ${key} out of range for ${pointer}`);
  } else {
    (parent as Record<string, unknown>)[key] = value;
  }
  return root;
}

function removeAt(root: unknown, pointer: string): unknown {
  const tokens = parsePointer(pointer);
  if (tokens.length === 0) throw new PatchNotApplied('cannot remove the document root');
  const { parent, key } = container(root, tokens, pointer);
  if (Array.isArray(parent) && ARRAY_INDEX.test(key) && Number(key) < parent.length) parent.splice(Number(key), 1);
  else if (isPlainObject(parent) && Object.hasOwn(parent, key)) delete parent[key];
  else throw new PatchNotApplied(`remove operation does not apply: doc is missing key: ${pointer}`);
  return root;
}

function valueAt(root: unknown, pointer: string): unknown {
  const found = resolve(root, parsePointer(pointer));
  if (!found.found) throw new PatchNotApplied(`operation does not apply: doc is missing path: ${pointer}`);
  return found.value;
}

/** RFC 6902 JSON patch; failures of the document (not of the patch's shape) are PatchNotApplied. */
function jsonPatch(document: unknown, ops: unknown): unknown {
  if (!Array.isArray(ops)) throw badRequest('json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  let root = clone(document);
  for (const op of ops) {
    if (!isPlainObject(op) || typeof op.op !== 'string' || typeof op.path !== 'string') {
      throw new PatchNotApplied('invalid operation');
    }
    const path = op.path;
    const from = typeof op.from === 'string' ? op.from : undefined;
    switch (op.op) {
      case 'add':
        root = addAt(root, path, clone(op.value));
        break;
      case 'remove':
        root = removeAt(root, path);
        break;
      case 'replace':
        valueAt(root, path);
        root = addAt(removeAt(root, path), path, clone(op.value));
        break;
      case 'move': {
        if (from === undefined) throw new PatchNotApplied('move operation is missing from');
        const value = valueAt(root, from);
        root = addAt(removeAt(root, from), path, value);
        break;
      }
      case 'copy': {
        if (from === undefined) throw new PatchNotApplied('copy operation is missing from');
        root = addAt(root, path, clone(valueAt(root, from)));
        break;
      }
      case 'test': {
        const found = resolve(root, parsePointer(path));
        const actual = found.found ? found.value : null;
        if (!isDeepStrictEqual(actual, op.value ?? null)) throw new PatchNotApplied(`testing value ${path} failed: test failed`);
        break;
      }
      default:
        throw new PatchNotApplied(`Unexpected kind: ${op.op}`);
    }
  }
  return root;
}

// ---------------------------------------------------------------------------------------
// Store and watches

interface ValidationCause {
  readonly field: string;
  readonly reason: string;
  readonly message: string;
}

type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

interface HistoryEvent {
  readonly rv: number;
  readonly rt: ResourceType;
  readonly type: EventType;
  readonly object: StoredObject;
  readonly old: StoredObject | undefined;
}

interface Watcher {
  readonly rt: ResourceType;
  readonly matches: Predicate;
  readonly res: ServerResponse;
  /** The last resourceVersion this watcher has been brought up to. */
  position: number;
  timer?: NodeJS.Timeout;
}

type WriteMode = 'object' | 'main' | 'status';

interface WriteOptions {
  /** `object`: a direct store write, taken whole; `main`/`status`: a client write through that endpoint. */
  readonly mode: WriteMode;
  readonly dryRun: boolean;
}

const keyOf = (ns: string | undefined, name: string): string => (ns ? `${ns}/${name}` : name);
const now = (): string => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
const GENERATE_NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** Everything but metadata (and status where a subresource owns it): what `generation` tracks. */
function specOf(rt: ResourceType, obj: KubeObject): Record<string, unknown> {
  const { metadata: _metadata, status, ...rest } = obj;
  return rt.hasStatus ? rest : { ...rest, status };
}

/** Watch events kept for replay; older resourceVersions get 410 Expired. */
const HISTORY_SIZE = 1000;

class Store {
  private rv = 1000;
  private historyStart = 1000;
  private history: HistoryEvent[] = [];
  private readonly objects = new Map<ResourceType, Map<string, StoredObject>>();
  readonly watchers = new Set<Watcher>();

  get resourceVersion(): number {
    return this.rv;
  }

  private bucket(rt: ResourceType): Map<string, StoredObject> {
    let bucket = this.objects.get(rt);
    if (!bucket) {
      bucket = new Map();
      this.objects.set(rt, bucket);
    }
    return bucket;
  }

  find(rt: ResourceType, ns: string | undefined, name: string): StoredObject | undefined {
    const found = this.bucket(rt).get(keyOf(rt.namespaced ? ns : undefined, name));
    return found && clone(found);
  }

  /** In etcd key order: namespace, then name. */
  list(rt: ResourceType, ns: string | undefined, matches: Predicate = () => true): StoredObject[] {
    return this.listStored(rt, ns, matches).map(clone);
  }

  /** As list, but the stored objects themselves, for a caller that copies only the page it sends. */
  listStored(rt: ResourceType, ns: string | undefined, matches: Predicate = () => true): StoredObject[] {
    return [...this.bucket(rt).entries()]
      .filter(([, obj]) => (!ns || obj.metadata.namespace === ns) && matches(obj))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, obj]) => obj);
  }

  private checkType(rt: ResourceType, obj: KubeObject): void {
    if (obj.apiVersion !== undefined && obj.apiVersion !== apiVersionOf(rt)) {
      throw badRequest(`the API version in the data (${obj.apiVersion}) does not match the expected API version (${apiVersionOf(rt)})`);
    }
    if (obj.kind !== undefined && obj.kind !== rt.kind) {
      throw badRequest(`the kind in the data (${obj.kind}) does not match the expected kind (${rt.kind})`);
    }
  }

  create(rt: ResourceType, incoming: KubeObject, urlNamespace: string | undefined, options: WriteOptions): StoredObject {
    this.checkType(rt, incoming);
    const obj = clone(incoming);
    const meta: ObjectMeta = { ...(obj.metadata ?? {}) };
    if (rt.namespaced) {
      if (urlNamespace && meta.namespace && meta.namespace !== urlNamespace) {
        throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
      }
      const ns = urlNamespace || meta.namespace;
      if (!ns) throw badRequest('the server could not find the namespace of the object: set metadata.namespace');
      meta.namespace = ns;
    } else {
      delete meta.namespace;
    }
    if (!meta.name && meta.generateName) {
      const suffix = Array.from({ length: 5 }, () => GENERATE_NAME_ALPHABET[Math.floor(Math.random() * GENERATE_NAME_ALPHABET.length)]);
      meta.name = meta.generateName + suffix.join('');
    }
    if (!meta.name) {
      throw invalid(rt, '', [
        { field: 'metadata.name', reason: 'FieldValueRequired', message: 'Required value: name or generateName is required' },
      ]);
    }
    if (this.bucket(rt).has(keyOf(meta.namespace, meta.name))) throw alreadyExists(rt, meta.name);
    if (options.mode !== 'object' && rt.hasStatus && !rt.statusOnCreate) delete obj.status;
    delete meta.resourceVersion;
    meta.uid = randomUUID();
    meta.creationTimestamp = now();
    if (rt.generation) meta.generation = 1;
    else delete meta.generation;
    const stored = { ...obj, apiVersion: apiVersionOf(rt), kind: rt.kind, metadata: meta } as StoredObject;
    return this.commit(rt, 'ADDED', stored, undefined, options.dryRun);
  }

  /** Replaces `old` with `incoming` as the endpoint named by `mode` would; an unchanged result writes nothing. */
  update(rt: ResourceType, old: StoredObject, incoming: KubeObject, options: WriteOptions): StoredObject {
    this.checkType(rt, incoming);
    let next: KubeObject;
    if (options.mode === 'status') {
      next = clone(old);
      if (incoming.status === undefined) delete next.status;
      else next.status = clone(incoming.status);
    } else {
      next = clone(incoming);
      if (options.mode === 'main' && rt.hasStatus) {
        if (old.status === undefined) delete next.status;
        else next.status = clone(old.status);
      }
    }
    const meta: ObjectMeta = { ...(next.metadata ?? {}) };
    meta.name = old.metadata.name;
    if (rt.namespaced) meta.namespace = old.metadata.namespace;
    else delete meta.namespace;
    meta.uid = old.metadata.uid;
    meta.creationTimestamp = old.metadata.creationTimestamp;
    meta.resourceVersion = old.metadata.resourceVersion;
    if (rt.generation) meta.generation = old.metadata.generation;
    else delete meta.generation;
    const validated = { ...next, apiVersion: apiVersionOf(rt), kind: rt.kind, metadata: meta };
    if (rt.generation && !isDeepStrictEqual(specOf(rt, validated), specOf(rt, old))) {
      validated.metadata = { ...validated.metadata, generation: (old.metadata.generation ?? 0) + 1 };
    }
    // etcd skips a write that would store identical bytes: no new resourceVersion, no event.
    if (isDeepStrictEqual(validated, old)) return clone(old);
    return this.commit(rt, 'MODIFIED', validated as StoredObject, old, options.dryRun);
  }

  delete(rt: ResourceType, old: StoredObject, dryRun: boolean): StoredObject {
    return this.commit(rt, 'DELETED', clone(old), old, dryRun);
  }

  private commit(rt: ResourceType, type: EventType, obj: StoredObject, old: StoredObject | undefined, dryRun: boolean): StoredObject {
    if (dryRun) return clone(obj);
    this.rv += 1;
    obj.metadata.resourceVersion = String(this.rv);
    const key = keyOf(obj.metadata.namespace, obj.metadata.name);
    if (type === 'DELETED') this.bucket(rt).delete(key);
    else this.bucket(rt).set(key, clone(obj));
    const event: HistoryEvent = { rv: this.rv, rt, type, object: clone(obj), old };
    this.history.push(event);
    if (this.history.length > HISTORY_SIZE) {
      const dropped = this.history.splice(0, this.history.length - HISTORY_SIZE);
      this.historyStart = dropped[dropped.length - 1]?.rv ?? this.historyStart;
    }
    for (const watcher of this.watchers) this.deliver(watcher, event);
    return clone(obj);
  }

  /** Events a watcher sees: an object moving into or out of its selection is ADDED or DELETED for it. */
  private deliver(watcher: Watcher, event: HistoryEvent): void {
    if (event.rt !== watcher.rt) return;
    watcher.position = event.rv;
    const isNow = event.type !== 'DELETED' && watcher.matches(event.object);
    const wasBefore = event.old !== undefined && watcher.matches(event.old);
    let type: EventType | undefined;
    if (event.type === 'DELETED') type = wasBefore ? 'DELETED' : undefined;
    else if (isNow) type = wasBefore ? 'MODIFIED' : 'ADDED';
    else if (wasBefore) type = 'DELETED';
    if (type) writeEvent(watcher, type, event.object);
  }

  /** Registers a watcher and brings it up to date: from `from`, or with every current object when undefined. */
  attach(watcher: Watcher, from: number | undefined, ns: string | undefined): void {
    if (from === undefined) {
      for (const obj of this.list(watcher.rt, ns, watcher.matches)) writeEvent(watcher, 'ADDED', obj);
      watcher.position = this.rv;
    } else if (from < this.historyStart) {
      writeEvent(watcher, 'ERROR', expired(`too old resource version: ${from} (${this.historyStart})`).status);
      watcher.res.end();
      return;
    } else {
      for (const event of this.history) if (event.rv > from) this.deliver(watcher, event);
      watcher.position = Math.max(from, this.rv);
    }
    this.watchers.add(watcher);
  }

  detach(watcher: Watcher): void {
    clearTimeout(watcher.timer);
    this.watchers.delete(watcher);
    if (!watcher.res.writableEnded && !watcher.res.destroyed) watcher.res.end();
  }

  /** Forgets the history; open watches get 410 Expired, as an etcd watch does when its revision is compacted. */
  compact(): void {
    this.history = [];
    this.historyStart = this.rv;
    for (const watcher of this.watchers) {
      writeEvent(watcher, 'ERROR', expired(`too old resource version: ${watcher.position} (${this.rv})`).status);
      this.detach(watcher);
    }
  }
}

function writeEvent(watcher: Watcher, type: EventType | 'ERROR', object: unknown): void {
  if (!watcher.res.writableEnded && !watcher.res.destroyed) watcher.res.write(`${JSON.stringify({ type, object })}\n`);
}

// ---------------------------------------------------------------------------------------
// The server

export interface ObjectRef {
  /** `services`, `infrastructures.config.openshift.io`; a bare plural when it is unambiguous. */
  readonly resource: string;
  readonly namespace?: string;
  readonly name: string;
}

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  readonly contentType: string | undefined;
  readonly status: number;
  readonly watch: boolean;
  readonly verb: string;
  readonly attributes: RequestAttributes;
}

export interface FailMatch {
  readonly method?: string;
  readonly pathIncludes?: string;
  readonly verb?: string;
}

export interface WriteRequest {
  readonly method: string;
  readonly path: string;
  readonly attributes: ResourceAttributes;
  readonly body: unknown;
}

/** Runs when a write arrives over HTTP, after authorization and before the store reads the current object. */
export type BeforeWriteHook = (request: WriteRequest) => void | Promise<void>;

export interface KubeApiServerOptions {
  /** When given, only requests these rules allow get through (403 otherwise); discovery is always allowed. */
  readonly rules?: readonly PolicyRule[];
  /** When given, requests must carry `Authorization: Bearer TOKEN` (401 otherwise). */
  readonly token?: string;
  /** The user RBAC denials name; default `system:serviceaccount:lbdns:lbdns`. */
  readonly user?: string;
  /** Keyed `group/plural` (`config.openshift.io/infrastructures`), or the bare plural for the core group. */
  /** Served in addition to RESOURCE_TYPES. */
  readonly extraResources?: readonly ResourceType[];
  /** Makes each list answer take as long as a real server's would (benchmarks only; tests answer at once). */
  readonly listCost?: ListCost;
  /** Serve HTTPS with this key and certificate (PEM), as kube-apiserver does. */
  readonly tls?: { readonly key: string; readonly cert: string };
}

/**
 * The time a real kube-apiserver takes to answer a list: reading the page from etcd, decoding
 * it, encoding it as JSON and compressing it grow with the page, on top of a fixed cost per
 * request. `bench/api-scale.ts` calibrates it on kube-apiserver 1.26.
 */
export interface ListCost {
  readonly perRequestMs: number;
  /** Per million bytes of the JSON answer, before compression. */
  readonly perMegabyteMs: number;
}

export interface KubeApiServer {
  /** `http://127.0.0.1:PORT`; the port stays the same across stop()/start(). */
  readonly url: string;
  /** The current (latest) resourceVersion. */
  readonly resourceVersion: string;
  /** Open watch streams. */
  readonly watchCount: number;
  /** Every answered request, in answer order (a watch when its stream starts). */
  readonly requests: readonly RecordedRequest[];
  clearRequests(): void;
  /** A kubeconfig (YAML) for url, with the bearer token when one is required. */
  kubeconfig(): string;
  /** Writes kubeconfig() to DIR/kubeconfig and returns that path. */
  writeKubeconfig(dir: string): Promise<string>;

  // Direct store access: bypasses authentication, RBAC, subresource rules and preconditions;
  // runs validators; every write bumps the resourceVersion and reaches open watches.
  create<T extends KubeObject = StoredObject>(obj: KubeObject): T;
  get<T extends KubeObject = StoredObject>(ref: ObjectRef): T | undefined;
  list<T extends KubeObject = StoredObject>(resource: string, namespace?: string): T[];
  /** Replaces the whole object, status included; unconditional. */
  update<T extends KubeObject = StoredObject>(obj: KubeObject): T;
  /** RFC 7386 merge patch of the whole object, status included. */
  mergePatch<T extends KubeObject = StoredObject>(ref: ObjectRef, patch: unknown): T;
  /** mergePatch(ref, { status }). */
  patchStatus<T extends KubeObject = StoredObject>(ref: ObjectRef, status: unknown): T;
  delete(ref: ObjectRef): StoredObject;

  /** Forgets the watch history: open watches and watches from older resourceVersions get 410 Expired. */
  compact(): void;
  /** Ends every open watch stream cleanly, as an apiserver does at its request timeout. */
  closeWatches(): void;
  /** Answers the next `count` matching requests with `status` and the Status body a real server would send. */
  /** `unanswered`: the request is taken and never answered, as by a proxy whose API server is gone. */
  failNext(match: FailMatch, status: number | 'unanswered', count?: number): void;
  /** Sets (or with undefined clears) the hook run when a write arrives, before it is applied. */
  beforeWrite(hook: BeforeWriteHook | undefined): void;
  /** Stops listening and drops every connection (watches end first); the store is kept. */
  stop(): Promise<void>;
  /** Listens again on the same port with the same store. */
  start(): Promise<void>;
  close(): Promise<void>;
}

interface Failure {
  readonly match: FailMatch;
  readonly status: number | 'unanswered';
  remaining: number;
}

const KUBE_VERSION = { major: '1', minor: '32', gitVersion: 'v1.32.0' } as const;

class TestKubeApiServer implements KubeApiServer {
  private readonly server: Server | HttpsServer;
  private readonly store: Store;
  private readonly types: readonly ResourceType[];
  private readonly log: RecordedRequest[] = [];
  private failures: Failure[] = [];
  private hook: BeforeWriteHook | undefined;
  private port = 0;
  private listening = false;

  constructor(private readonly options: KubeApiServerOptions) {
    this.types = [...RESOURCE_TYPES, ...(options.extraResources ?? [])];
    this.store = new Store();
    const handler = (req: IncomingMessage, res: ServerResponse) => {
      this.handle(req, res).catch((err: unknown) => {
        if (!res.headersSent) res.writeHead(500).end(String(err));
        else res.destroy();
      });
    };
    this.server = options.tls ? createHttpsServer({ key: options.tls.key, cert: options.tls.cert }, handler) : createServer(handler);
  }

  get url(): string {
    return `${this.options.tls ? 'https' : 'http'}://127.0.0.1:${this.port}`;
  }

  get resourceVersion(): string {
    return String(this.store.resourceVersion);
  }

  get watchCount(): number {
    return this.store.watchers.size;
  }

  get requests(): readonly RecordedRequest[] {
    return this.log;
  }

  clearRequests(): void {
    this.log.length = 0;
  }

  kubeconfig(): string {
    // client-node refuses an http: server unless TLS verification is explicitly skipped.
    return toYaml({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'test', cluster: { server: this.url, 'insecure-skip-tls-verify': true } }],
      users: [{ name: 'test', user: this.options.token ? { token: this.options.token } : {} }],
      contexts: [{ name: 'test', context: { cluster: 'test', user: 'test' } }],
      'current-context': 'test',
    });
  }

  async writeKubeconfig(dir: string): Promise<string> {
    const path = join(dir, 'kubeconfig');
    await writeFile(path, this.kubeconfig(), { mode: 0o600 });
    return path;
  }

  // --- direct store access

  private typeNamed(resource: string): ResourceType {
    const exact = this.types.find((rt) => qualifiedResource(rt) === resource);
    if (exact) return exact;
    const byPlural = this.types.filter((rt) => rt.plural === resource);
    if (byPlural.length === 1 && byPlural[0]) return byPlural[0];
    throw new Error(`the test API server does not serve "${resource}"; known: ${this.types.map(qualifiedResource).join(', ')}`);
  }

  private typeOf(obj: KubeObject): ResourceType {
    const rt = this.types.find((t) => apiVersionOf(t) === obj.apiVersion && t.kind === obj.kind);
    if (!rt) throw new Error(`the test API server does not serve apiVersion "${obj.apiVersion}" kind "${obj.kind}"`);
    return rt;
  }

  private existing(rt: ResourceType, ns: string | undefined, name: string): StoredObject {
    const found = this.store.find(rt, ns, name);
    if (!found) throw notFound(rt, name);
    return found;
  }

  create<T extends KubeObject = StoredObject>(obj: KubeObject): T {
    return this.store.create(this.typeOf(obj), obj, obj.metadata?.namespace, { mode: 'object', dryRun: false }) as KubeObject as T;
  }

  get<T extends KubeObject = StoredObject>(ref: ObjectRef): T | undefined {
    return this.store.find(this.typeNamed(ref.resource), ref.namespace, ref.name) as KubeObject | undefined as T | undefined;
  }

  list<T extends KubeObject = StoredObject>(resource: string, namespace?: string): T[] {
    return this.store.list(this.typeNamed(resource), namespace) as KubeObject[] as T[];
  }

  update<T extends KubeObject = StoredObject>(obj: KubeObject): T {
    const rt = this.typeOf(obj);
    const old = this.existing(rt, obj.metadata?.namespace, obj.metadata?.name ?? '');
    return this.store.update(rt, old, obj, { mode: 'object', dryRun: false }) as KubeObject as T;
  }

  mergePatch<T extends KubeObject = StoredObject>(ref: ObjectRef, patch: unknown): T {
    const rt = this.typeNamed(ref.resource);
    const old = this.existing(rt, ref.namespace, ref.name);
    const patched = mergePatch(old, patch) as KubeObject;
    return this.store.update(rt, old, patched, { mode: 'object', dryRun: false }) as KubeObject as T;
  }

  patchStatus<T extends KubeObject = StoredObject>(ref: ObjectRef, status: unknown): T {
    return this.mergePatch<T>(ref, { status });
  }

  delete(ref: ObjectRef): StoredObject {
    const rt = this.typeNamed(ref.resource);
    return this.store.delete(rt, this.existing(rt, ref.namespace, ref.name), false);
  }

  // --- test controls

  compact(): void {
    this.store.compact();
  }

  closeWatches(): void {
    for (const watcher of [...this.store.watchers]) this.store.detach(watcher);
  }

  failNext(match: FailMatch, status: number | 'unanswered', count = 1): void {
    this.failures.push({ match, status, remaining: count });
  }

  beforeWrite(hook: BeforeWriteHook | undefined): void {
    this.hook = hook;
  }

  async start(): Promise<void> {
    if (this.listening) return;
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.port, '127.0.0.1', () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    this.port = (this.server.address() as AddressInfo).port;
    this.listening = true;
  }

  async stop(): Promise<void> {
    if (!this.listening) return;
    this.listening = false;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    // Watch streams end with their final chunk flushed, so clients see a clean end, not a reset.
    const flushed = [...this.store.watchers].map((watcher) => {
      const finished = new Promise<void>((resolve) => {
        watcher.res.once('finish', resolve);
        watcher.res.once('close', resolve);
      });
      this.store.detach(watcher);
      return finished;
    });
    await Promise.all(flushed);
    this.server.closeAllConnections();
    await closed;
  }

  async close(): Promise<void> {
    await this.stop();
    this.failures = [];
    this.hook = undefined;
  }

  // --- HTTP

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = (req.method ?? 'GET').toUpperCase();
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const { attributes: attrs, pathName } = parseRequest(method, req.url ?? '/');
    const contentType = req.headers['content-type'];
    const record = (status: number): void => {
      this.log.push({
        method,
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        contentType,
        status,
        watch: attrs.verb === 'watch',
        verb: attrs.verb,
        attributes: attrs,
      });
    };
    const send = (status: number, body: unknown, headers: Record<string, string> = {}): void => {
      record(status);
      write(status, JSON.stringify(body), headers);
    };
    // kube-apiserver gzips an answer over 128 KiB for a client that accepts it (APIResponseCompression).
    const encode = (text: string): Encoded =>
      text.length > GZIP_THRESHOLD_BYTES && acceptsGzip(req.headers['accept-encoding']) ? { body: gzipSync(text, { level: 1 }), gzip: true } : { body: text, gzip: false };
    const writeEncoded = (status: number, { body, gzip }: Encoded, headers: Record<string, string> = {}): void => {
      res.writeHead(status, { 'Content-Type': 'application/json', ...(gzip ? { 'Content-Encoding': 'gzip' } : {}), ...headers });
      res.end(body);
    };
    const write = (status: number, text: string, headers: Record<string, string> = {}): void => writeEncoded(status, encode(text), headers);
    try {
      if (this.options.token !== undefined && req.headers.authorization !== `Bearer ${this.options.token}`) {
        throw unauthorized();
      }
      if (!attrs.resourceRequest) {
        const [status, body] = this.nonResource(method, url.pathname);
        send(status, body);
        return;
      }
      const rt = this.types.find(
        (t) => t.group === attrs.apiGroup && t.version === attrs.apiVersion && t.plural === attrs.resource,
      );
      const user = this.options.user ?? DEFAULT_USER;
      if (this.options.rules && !rulesAllow(this.options.rules, attrs)) throw forbidden(attrs, user);
      const injected = this.takeFailure(method, url.pathname, attrs.verb);
      if (injected === 'unanswered') {
        record(0);
        return;
      }
      if (injected !== undefined) {
        const err = injectedFailure(injected, attrs, rt, user);
        send(err.status.code, err.status, injected === 429 ? { 'Retry-After': '1' } : {});
        return;
      }
      if (!rt) throw pathNotFound();
      await this.resourceRequest(rt, attrs, pathName, method, url, req, res, send, record, { encode, write: writeEncoded });
    } catch (err) {
      if (err instanceof StatusError) send(err.status.code, err.status);
      else send(500, internalError(err instanceof Error ? err.message : String(err)).status);
    }
  }

  private takeFailure(method: string, path: string, verb: string): number | 'unanswered' | undefined {
    const failure = this.failures.find(
      (f) =>
        (f.match.method === undefined || f.match.method.toUpperCase() === method) &&
        (f.match.pathIncludes === undefined || path.includes(f.match.pathIncludes)) &&
        (f.match.verb === undefined || f.match.verb === verb),
    );
    if (!failure) return undefined;
    failure.remaining -= 1;
    if (failure.remaining <= 0) this.failures = this.failures.filter((f) => f !== failure);
    return failure.status;
  }

  private async resourceRequest(
    rt: ResourceType,
    attrs: ResourceAttributes,
    name: string,
    method: string,
    url: URL,
    req: IncomingMessage,
    res: ServerResponse,
    send: (status: number, body: unknown) => void,
    record: (status: number) => void,
    answer: { readonly encode: (text: string) => Encoded; readonly write: (status: number, encoded: Encoded) => void },
  ): Promise<void> {
    const { verb, namespace, subresource } = attrs;
    if (subresource !== '' && !(subresource === 'status' && rt.hasStatus)) throw pathNotFound();
    if (rt.namespaced ? name !== '' && namespace === '' : namespace !== '') throw pathNotFound();
    const ns = rt.namespaced ? namespace || undefined : undefined;
    const query = url.searchParams;
    const dryRun = query.getAll('dryRun').includes('All');

    if (verb === 'list' || verb === 'watch') {
      const matches = this.selection(query, name);
      if (verb === 'watch') {
        this.watch(rt, ns, matches, query, res, record);
        return;
      }
      const started = performance.now();
      const text = JSON.stringify(this.listBody(rt, ns, matches, query));
      const body = answer.encode(text);
      const cost = this.options.listCost;
      // The server's own work, compression included, counts towards the modelled cost: it only waits for the rest.
      if (cost !== undefined) await sleep(Math.max(0, cost.perRequestMs + (text.length / 1e6) * cost.perMegabyteMs - (performance.now() - started)));
      record(200);
      answer.write(200, body);
      return;
    }
    if (verb === 'get') {
      send(200, this.existing(rt, ns, name));
      return;
    }

    // Namespaced collections take writes only under /namespaces/NS/; `/status` only update and patch.
    const inScope = !rt.namespaced || ns !== undefined;
    const allowed =
      name === ''
        ? (verb === 'create' || verb === 'deletecollection') && inScope
        : verb === 'update' || verb === 'patch' || (verb === 'delete' && subresource === '');
    if (!allowed) throw methodNotAllowed();

    if (verb === 'patch') {
      const patchType = (req.headers['content-type'] ?? '').split(';')[0]?.trim() ?? '';
      const accepted = ['application/json-patch+json', 'application/merge-patch+json'];
      if (!rt.custom) accepted.push('application/strategic-merge-patch+json');
      if (!accepted.includes(patchType)) throw unsupportedMediaType(rt);
    }
    const text = await readBody(req);
    const body = text === '' ? undefined : parseJson(text);
    if (this.hook) await this.hook({ method, path: url.pathname, attributes: attrs, body });
    const mode: WriteMode = subresource === 'status' ? 'status' : 'main';

    switch (verb) {
      case 'create': {
        send(201, this.store.create(rt, asObject(body), ns, { mode, dryRun }));
        return;
      }
      case 'update': {
        const incoming = asObject(body);
        if (incoming.metadata?.name !== undefined && incoming.metadata.name !== name) {
          throw badRequest(`the name of the object (${incoming.metadata.name}) does not match the name on the URL (${name})`);
        }
        if (rt.namespaced && incoming.metadata?.namespace && incoming.metadata.namespace !== ns) {
          throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
        }
        const old = this.existing(rt, ns, name);
        const rv = incoming.metadata?.resourceVersion;
        if (!rv && rt.custom) {
          const cause = {
            field: 'metadata.resourceVersion',
            reason: 'FieldValueInvalid',
            message: 'Invalid value: 0x0: must be specified for an update',
          };
          throw invalid(rt, name, [cause], rt.plural);
        }
        if (rv && rv !== old.metadata.resourceVersion) throw conflict(rt, name, MODIFIED_CONFLICT);
        send(200, this.store.update(rt, old, incoming, { mode, dryRun }));
        return;
      }
      case 'patch': {
        const old = this.existing(rt, ns, name);
        const patchType = (req.headers['content-type'] ?? '').split(';')[0]?.trim();
        let patched: unknown;
        try {
          patched = patchType === 'application/json-patch+json' ? jsonPatch(old, body) : mergePatchBody(old, body);
        } catch (err) {
          if (err instanceof PatchNotApplied) throw patchNotApplied();
          throw err;
        }
        const result = asObject(patched);
        if (result.metadata?.name !== name) {
          throw badRequest(`the name of the object (${result.metadata?.name ?? ''}) does not match the name on the URL (${name})`);
        }
        const rv = result.metadata?.resourceVersion;
        if (rv && rv !== old.metadata.resourceVersion) throw conflict(rt, name, MODIFIED_CONFLICT);
        send(200, this.store.update(rt, old, result, { mode, dryRun }));
        return;
      }
      case 'delete': {
        const old = this.existing(rt, ns, name);
        checkDeletePreconditions(rt, old, body);
        const deleted = this.store.delete(rt, old, dryRun);
        send(
          200,
          rt.deleteReturnsObject
            ? deleted
            : {
                kind: 'Status',
                apiVersion: 'v1',
                metadata: {},
                status: 'Success',
                details: { name, group: rt.group || undefined, kind: rt.plural, uid: old.metadata.uid },
              },
        );
        return;
      }
      case 'deletecollection': {
        const items = this.store.list(rt, ns, this.selection(query, ''));
        const deleted = items.map((item) => this.store.delete(rt, item, dryRun));
        const metadata = { resourceVersion: this.resourceVersion };
        send(200, { kind: `${rt.kind}List`, apiVersion: apiVersionOf(rt), metadata, items: deleted });
        return;
      }
      default:
        throw methodNotAllowed();
    }
  }

  private selection(query: URLSearchParams, name: string): Predicate {
    const labels = parseLabelSelector(query.get('labelSelector') ?? '');
    const fields = parseFieldSelector(query.get('fieldSelector') ?? '');
    return (obj) => (name === '' || obj.metadata.name === name) && labels(obj) && fields(obj);
  }

  private listBody(rt: ResourceType, ns: string | undefined, matches: Predicate, query: URLSearchParams): unknown {
    const all = this.store.listStored(rt, ns, matches);
    let listRv = this.resourceVersion;
    let start = 0;
    const token = query.get('continue');
    if (token) {
      const decoded = decodeContinue(token);
      listRv = decoded.rv;
      start = all.findIndex((obj) => keyOf(obj.metadata.namespace, obj.metadata.name) > decoded.key);
      if (start < 0) start = all.length;
    }
    const limit = Number(query.get('limit') ?? '0');
    const end = limit > 0 ? Math.min(start + limit, all.length) : all.length;
    const items = all.slice(start, end).map(clone);
    const metadata: Record<string, unknown> = { resourceVersion: listRv };
    const last = items[items.length - 1];
    if (end < all.length && last) {
      const position = { rv: listRv, key: keyOf(last.metadata.namespace, last.metadata.name) };
      metadata.continue = Buffer.from(JSON.stringify(position)).toString('base64url');
      if (!query.get('labelSelector') && !query.get('fieldSelector')) metadata.remainingItemCount = all.length - end;
    }
    return { kind: `${rt.kind}List`, apiVersion: apiVersionOf(rt), metadata, items };
  }

  private watch(
    rt: ResourceType,
    ns: string | undefined,
    matches: Predicate,
    query: URLSearchParams,
    res: ServerResponse,
    record: (status: number) => void,
  ): void {
    const rvParam = query.get('resourceVersion') ?? '';
    let from: number | undefined;
    if (rvParam !== '' && rvParam !== '0') {
      if (!/^[0-9]+$/.test(rvParam)) throw badRequest(`invalid resource version: ${rvParam}`);
      from = Number(rvParam);
    }
    const watcher: Watcher = {
      rt,
      matches: (obj) => (!ns || obj.metadata.namespace === ns) && matches(obj),
      res,
      position: this.store.resourceVersion,
    };
    record(200);
    res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' });
    res.flushHeaders();
    res.once('close', () => this.store.detach(watcher));
    this.store.attach(watcher, from, ns);
    const timeout = Number(query.get('timeoutSeconds') ?? '0');
    if (timeout > 0 && this.store.watchers.has(watcher)) {
      watcher.timer = setTimeout(() => this.store.detach(watcher), timeout * 1000);
    }
  }

  private nonResource(method: string, path: string): [number, unknown] {
    if (method !== 'GET') throw methodNotAllowed();
    const trimmed = path.replace(/\/+$/, '') || '/';
    if (trimmed === '/version') {
      return [200, { ...KUBE_VERSION, gitTreeState: 'clean', compiler: 'gc', platform: 'linux/amd64' }];
    }
    if (trimmed === '/api') {
      const serverAddressByClientCIDRs = [{ clientCIDR: '0.0.0.0/0', serverAddress: `127.0.0.1:${this.port}` }];
      return [200, { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs }];
    }
    if (trimmed === '/apis') {
      const groups = [...new Set(this.types.filter((t) => t.group).map((t) => t.group))];
      return [200, { kind: 'APIGroupList', apiVersion: 'v1', groups: groups.map((g) => this.groupBody(g)) }];
    }
    const segments = trimmed.split('/').filter((s) => s !== '');
    if (segments[0] === 'apis' && segments.length === 2 && this.types.some((t) => t.group === segments[1])) {
      return [200, { kind: 'APIGroup', apiVersion: 'v1', ...this.groupBody(segments[1] ?? '') }];
    }
    const [group, version] = segments[0] === 'api' ? ['', segments[1]] : [segments[1], segments[2]];
    const served = this.types.filter((t) => t.group === group && t.version === version);
    if (served.length > 0 && segments.length === (segments[0] === 'api' ? 2 : 3)) {
      const groupVersion = group ? `${group}/${version}` : version;
      return [200, { kind: 'APIResourceList', apiVersion: 'v1', groupVersion, resources: served.flatMap(discoveryEntries) }];
    }
    throw pathNotFound();
  }

  private groupBody(group: string): { name: string; versions: { groupVersion: string; version: string }[]; preferredVersion: unknown } {
    const versions = [...new Set(this.types.filter((t) => t.group === group).map((t) => t.version))].map((version) => ({
      groupVersion: `${group}/${version}`,
      version,
    }));
    return { name: group, versions, preferredVersion: versions[0] };
  }
}

const DEFAULT_USER = 'system:serviceaccount:lbdns:lbdns';

function discoveryEntries(rt: ResourceType): unknown[] {
  const entries: unknown[] = [
    {
      name: rt.plural,
      singularName: rt.kind.toLowerCase(),
      namespaced: rt.namespaced,
      kind: rt.kind,
      verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
    },
  ];
  if (rt.hasStatus) {
    const verbs = ['get', 'patch', 'update'];
    entries.push({ name: `${rt.plural}/status`, singularName: '', namespaced: rt.namespaced, kind: rt.kind, verbs });
  }
  return entries;
}

function asObject(body: unknown): KubeObject {
  if (!isPlainObject(body)) throw badRequest('the body of the request must be a JSON object');
  if (body.metadata !== undefined && !isPlainObject(body.metadata)) throw badRequest('metadata must be a JSON object');
  return body as KubeObject;
}

function mergePatchBody(old: StoredObject, body: unknown): unknown {
  if (!isPlainObject(body)) throw badRequest('Invalid JSON Patch');
  return mergePatch(old, body);
}

function checkDeletePreconditions(rt: ResourceType, old: StoredObject, body: unknown): void {
  const preconditions = isPlainObject(body) && isPlainObject(body.preconditions) ? body.preconditions : {};
  const { uid, resourceVersion } = preconditions;
  if (typeof uid === 'string' && uid !== old.metadata.uid) {
    throw conflict(rt, old.metadata.name, `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${old.metadata.uid}`);
  }
  if (typeof resourceVersion === 'string' && resourceVersion !== old.metadata.resourceVersion) {
    throw conflict(
      rt,
      old.metadata.name,
      `Precondition failed: ResourceVersion in precondition: ${resourceVersion}, ResourceVersion in object meta: ${old.metadata.resourceVersion}`,
    );
  }
}

function decodeContinue(token: string): { rv: string; key: string } {
  try {
    const decoded: unknown = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
    if (isPlainObject(decoded) && typeof decoded.rv === 'string' && typeof decoded.key === 'string') {
      return { rv: decoded.rv, key: decoded.key };
    }
  } catch {
    // falls through to the BadRequest below
  }
  throw badRequest(`continue key is not valid: ${token}`);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw badRequest(`error decoding body: ${err instanceof Error ? err.message : String(err)}`);
  }
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Starts a server on 127.0.0.1 with an ephemeral port and an empty store. */
export async function startKubeApiServer(options: KubeApiServerOptions = {}): Promise<KubeApiServer> {
  const server = new TestKubeApiServer(options);
  await server.start();
  return server;
}
