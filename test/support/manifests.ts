/**
 * The shipped manifests as tests need them: every document of manifests/*.yaml, the pods in
 * them (a Pod, or a Deployment's or CronJob's template), their lbdns containers, where a path
 * a container is given lies on its volumes, and the RBAC rules bound to a subject the way the
 * authorizer combines them.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadAll } from 'js-yaml';
import type { KubeObject, PolicyRule } from './kube-api-server.js';

export const MANIFEST_DIR = fileURLToPath(new URL('../../manifests/', import.meta.url));
const LBDNS_IMAGE = 'quay.io/lbdns/lbdns';
const RBAC = 'rbac.authorization.k8s.io/v1';

export interface Manifest {
  /** File name within manifests/. */
  readonly file: string;
  readonly object: Record<string, unknown> & {
    apiVersion?: string;
    kind?: string;
    metadata?: { name?: string; namespace?: string };
  };
}

export interface VolumeMount {
  readonly name: string;
  readonly mountPath: string;
  readonly readOnly?: boolean;
}

export interface HttpProbe {
  readonly httpGet?: { readonly host?: string; readonly path?: string; readonly port?: number | string; readonly scheme?: string };
}

export interface Container {
  readonly name: string;
  readonly image?: string;
  readonly command?: readonly string[];
  readonly args?: readonly string[];
  readonly env?: readonly { readonly name: string; readonly value?: string; readonly valueFrom?: { readonly fieldRef?: { readonly fieldPath: string } } }[];
  readonly volumeMounts?: readonly VolumeMount[];
  readonly livenessProbe?: HttpProbe;
  readonly readinessProbe?: HttpProbe;
  readonly securityContext?: {
    readonly runAsUser?: number;
    readonly readOnlyRootFilesystem?: boolean;
    readonly allowPrivilegeEscalation?: boolean;
    readonly capabilities?: { readonly drop?: readonly string[]; readonly add?: readonly string[] };
  };
}

export interface Volume {
  readonly name: string;
  readonly hostPath?: { readonly path: string; readonly type?: string };
  readonly emptyDir?: object;
}

export interface PodSpec {
  readonly hostNetwork?: boolean;
  readonly priorityClassName?: string;
  readonly serviceAccountName?: string;
  readonly tolerations?: readonly { key?: string; operator?: string; effect?: string }[];
  readonly initContainers?: readonly Container[];
  readonly containers: readonly Container[];
  readonly volumes?: readonly Volume[];
}

export interface Workload {
  readonly manifest: Manifest;
  /** `static-pod-control-plane.yaml Pod/lbdns-coredns`, for messages. */
  readonly label: string;
  readonly namespace: string | undefined;
  readonly spec: PodSpec;
}

export interface ContainerRef {
  readonly workload: Workload;
  readonly container: Container;
  readonly init: boolean;
  /** `… Pod/lbdns-coredns container lbdns-monitor`. */
  readonly label: string;
}

/** The cloud platforms the manifests carry RBAC for, as platform/<name>.yaml names them. */
export type ManifestPlatform = 'aws' | 'gcp' | 'azure';

/** What an admin applies on `platform`: every manifests/*.yaml, and platform/<platform>.yaml. */
export function loadManifests(platform: ManifestPlatform = 'aws'): Manifest[] {
  const files = [...readdirSync(MANIFEST_DIR).filter((f) => f.endsWith('.yaml') || f.endsWith('.yml')).sort(), `platform/${platform}.yaml`];
  return files.flatMap((file) =>
    loadAll(readFileSync(join(MANIFEST_DIR, file), 'utf8'), null, { filename: `manifests/${file}` }).flatMap((object) =>
      object === null || object === undefined ? [] : [{ file, object: object as Manifest['object'] }],
    ),
  );
}

/** The Roles, ClusterRoles and their bindings, as objects to create. */
export function rbacObjects(manifests: readonly Manifest[]): KubeObject[] {
  return manifests.filter((m) => m.object.apiVersion === RBAC).map((m) => m.object as KubeObject);
}

export const describe = (m: Manifest): string => `${m.file} ${m.object.kind}/${m.object.metadata?.name}`;

function podSpecOf(object: Manifest['object']): PodSpec | undefined {
  const spec = object.spec as Record<string, any> | undefined;
  if (object.kind === 'Pod') return spec as PodSpec | undefined;
  if (object.kind === 'Deployment' || object.kind === 'DaemonSet' || object.kind === 'StatefulSet' || object.kind === 'Job') return spec?.template?.spec;
  if (object.kind === 'CronJob') return spec?.jobTemplate?.spec?.template?.spec;
  return undefined;
}

export function workloads(manifests: readonly Manifest[]): Workload[] {
  return manifests.flatMap((manifest) => {
    const spec = podSpecOf(manifest.object);
    return spec ? [{ manifest, label: describe(manifest), namespace: manifest.object.metadata?.namespace, spec }] : [];
  });
}

export function containersOf(workload: Workload): ContainerRef[] {
  const refs = (list: readonly Container[] | undefined, init: boolean) =>
    (list ?? []).map((container) => ({ workload, container, init, label: `${workload.label} ${init ? 'initContainer' : 'container'} ${container.name}` }));
  return [...refs(workload.spec.initContainers, true), ...refs(workload.spec.containers, false)];
}

/** Containers that run lbdns: its command, or its image (whose entrypoint is lbdns). */
export function lbdnsContainers(of: readonly Workload[]): ContainerRef[] {
  return of
    .flatMap(containersOf)
    .filter(({ container }) => container.command?.[0] === 'lbdns' || container.image?.split(':')[0] === LBDNS_IMAGE);
}

/** The mount a container path lies on (the deepest one), and the path relative to it. */
export function mountOf(container: Container, path: string): { mount: VolumeMount; relative: string } | undefined {
  let best: { mount: VolumeMount; relative: string } | undefined;
  for (const mount of container.volumeMounts ?? []) {
    const root = mount.mountPath.replace(/\/+$/, '');
    const relative = path === root ? '' : path.startsWith(`${root}/`) ? path.slice(root.length + 1) : undefined;
    if (relative !== undefined && (!best || root.length > best.mount.mountPath.length)) best = { mount, relative };
  }
  return best;
}

// ---------------------------------------------------------------------------------------
// RBAC

export interface Subject {
  readonly kind: 'User' | 'Group' | 'ServiceAccount';
  readonly name: string;
  readonly namespace?: string;
}

/** What a kubelet authenticates as: its user, the nodes group, and every authenticated user's group. */
export function nodeSubjects(node: string): Subject[] {
  return [
    { kind: 'User', name: `system:node:${node}` },
    { kind: 'Group', name: 'system:nodes' },
    { kind: 'Group', name: 'system:authenticated' },
  ];
}

/** A ServiceAccount, and the groups the token authenticator puts it in. */
export function serviceAccountSubjects(namespace: string, name: string): Subject[] {
  return [
    { kind: 'ServiceAccount', name, namespace },
    { kind: 'User', name: `system:serviceaccount:${namespace}:${name}` },
    { kind: 'Group', name: 'system:serviceaccounts' },
    { kind: 'Group', name: `system:serviceaccounts:${namespace}` },
    { kind: 'Group', name: 'system:authenticated' },
  ];
}

/** One rule as granted: a RoleBinding's rules carry its namespace. */
export interface GrantedRule extends PolicyRule {
  /** `rbac.yaml ClusterRole/lbdns-static-pods via ClusterRoleBinding/lbdns-static-pods`. */
  readonly origin: string;
}

interface Binding {
  kind?: string;
  metadata?: { name?: string; namespace?: string };
  roleRef?: { apiGroup?: string; kind?: string; name?: string };
  subjects?: { kind?: string; name?: string; namespace?: string }[];
}

function bindsSubject(binding: Binding, subjects: readonly Subject[]): boolean {
  const bindingNamespace = binding.kind === 'RoleBinding' ? binding.metadata?.namespace : undefined;
  return (binding.subjects ?? []).some((s) =>
    subjects.some(
      (subject) =>
        s.kind === subject.kind &&
        s.name === subject.name &&
        (subject.kind !== 'ServiceAccount' || (s.namespace ?? bindingNamespace) === subject.namespace),
    ),
  );
}

/** Every rule the manifests bind to any of `subjects`; a binding to a role no manifest defines is an error. */
export function rulesFor(manifests: readonly Manifest[], subjects: readonly Subject[]): GrantedRule[] {
  const rbac = manifests.filter((m) => m.object.apiVersion === RBAC);
  const role = (kind: string, name: string, namespace: string | undefined): Manifest => {
    const found = rbac.find((m) => m.object.kind === kind && m.object.metadata?.name === name && m.object.metadata?.namespace === namespace);
    if (!found) throw new Error(`a binding refers to ${kind} ${namespace ? `${namespace}/` : ''}${name}, which no manifest defines`);
    return found;
  };
  const granted: GrantedRule[] = [];
  for (const m of rbac.filter((b) => b.object.kind === 'ClusterRoleBinding' || b.object.kind === 'RoleBinding')) {
    const binding = m.object as Binding;
    if (!bindsSubject(binding, subjects)) continue;
    const ref = binding.roleRef;
    if (ref?.apiGroup !== 'rbac.authorization.k8s.io' || !ref.name || (ref.kind !== 'ClusterRole' && ref.kind !== 'Role')) {
      throw new Error(`${describe(m)} has no usable roleRef`);
    }
    const namespace = binding.kind === 'RoleBinding' ? binding.metadata?.namespace : undefined;
    if (binding.kind === 'RoleBinding' && !namespace) throw new Error(`${describe(m)} has no namespace`);
    if (binding.kind === 'ClusterRoleBinding' && ref.kind !== 'ClusterRole') throw new Error(`${describe(m)} must refer to a ClusterRole`);
    const source = role(ref.kind, ref.name, ref.kind === 'Role' ? namespace : undefined);
    const origin = `${describe(source)} via ${binding.kind}/${binding.metadata?.name}`;
    for (const rule of (source.object.rules as PolicyRule[] | undefined) ?? []) {
      granted.push({ ...rule, ...(namespace === undefined ? {} : { namespace }), origin });
    }
  }
  return granted;
}

/** Every rule of every (Cluster)Role in the manifests, bound or not. */
export function allRules(manifests: readonly Manifest[]): { rule: PolicyRule; origin: string }[] {
  return manifests
    .filter((m) => m.object.apiVersion === RBAC && (m.object.kind === 'ClusterRole' || m.object.kind === 'Role'))
    .flatMap((m) => ((m.object.rules as PolicyRule[] | undefined) ?? []).map((rule) => ({ rule, origin: describe(m) })));
}

/** A rule split into one rule per verb, group, resource and resource name: the units a least-privilege check wants each used. */
export function atomsOf(rule: GrantedRule): GrantedRule[] {
  const names = rule.resourceNames?.length ? rule.resourceNames.map((name) => [name]) : [undefined];
  return rule.verbs.flatMap((verb) =>
    (rule.apiGroups ?? []).flatMap((group) =>
      (rule.resources ?? []).flatMap((resource) =>
        names.map((resourceNames) => ({ ...rule, verbs: [verb], apiGroups: [group], resources: [resource], ...(resourceNames ? { resourceNames } : {}) })),
      ),
    ),
  );
}
