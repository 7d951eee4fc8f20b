import type { ClusterSpec } from '../model.js';

/*
 * The names a Gateway name may not meet: the cluster's own (api, api-int, *.apps, every node)
 * and those other sources serve. Indexed by suffix, so a name is checked in the time of its
 * labels: a cluster has thousands of nodes, and every Gateway name is checked against them.
 */

export const bodyOf = (name: string): string => (name.startsWith('*.') ? name.slice(2) : name);

export interface Meeting {
  readonly reason: 'cluster-name' | 'other-source';
  readonly detail: string;
}

/** Names (no `*.`), each with what a name meeting it is told; the first listed wins. */
class MetNames {
  private readonly exact = new Map<string, number>();
  /** Every proper parent of a listed name: a wildcard on it covers that name. */
  private readonly parents = new Map<string, number>();

  constructor(readonly names: readonly string[]) {
    names.forEach((name, i) => {
      if (!this.exact.has(name)) this.exact.set(name, i);
      for (let dot = name.indexOf('.'); dot >= 0; dot = name.indexOf('.', dot + 1)) {
        const parent = name.slice(dot + 1);
        if (!this.parents.has(parent)) this.parents.set(parent, i);
      }
    });
  }

  /** The index of the first listed name `name` is equal to or under, or covers as a wildcard. */
  firstMet(name: string): number | undefined {
    const body = bodyOf(name);
    let best = body === name ? undefined : this.parents.get(body);
    for (let at = 0; ; ) {
      const i = this.exact.get(at === 0 ? body : body.slice(at));
      if (i !== undefined && (best === undefined || i < best)) best = i;
      const dot = body.indexOf('.', at);
      if (dot < 0) return best;
      at = dot + 1;
    }
  }

  /** The index of the first listed name `name` is, or covers as a wildcard. */
  firstNamed(name: string): number | undefined {
    const body = bodyOf(name);
    return body === name ? this.exact.get(name) : this.parents.get(body);
  }
}

/** Some of a list's names, with where each stands in the list. */
interface Some {
  readonly at: readonly number[];
  readonly names: MetNames;
}

function some(names: readonly string[], pick: (name: string) => boolean, as: (name: string) => string): Some {
  const at = names.flatMap((name, i) => (pick(name) ? [i] : []));
  return { at, names: new MetNames(at.map((i) => as(names[i] as string))) };
}

/**
 * The cluster's own names are kept whole: nothing is served at or under them. Another source's
 * name is kept as DNS serves it: a wildcard answers its whole tree (and its apex is kept with
 * it), any other name itself, so a Gateway name under it is a name of its own.
 */
export class NameGuard {
  private readonly roots: MetNames;
  private readonly wildcards: Some;
  private readonly named: Some;

  constructor(
    /** Equal keys, equal guards: a guard is kept while the cluster's names stay the same. */
    readonly key: string,
    roots: readonly string[],
    private readonly otherSources: readonly { readonly name: string; readonly source: string }[],
  ) {
    this.roots = new MetNames(roots);
    const names = otherSources.map((o) => o.name);
    this.wildcards = some(names, (n) => n.startsWith('*.'), bodyOf);
    this.named = some(names, (n) => !n.startsWith('*.'), (n) => n);
  }

  /** Why `name` may not be served, if it meets a protected name. */
  meeting(name: string): Meeting | undefined {
    const root = this.roots.firstMet(name);
    if (root !== undefined) return { reason: 'cluster-name', detail: `is or covers the cluster's own name ${this.roots.names[root] as string}` };
    const wildcard = this.wildcards.names.firstMet(name);
    const named = this.named.names.firstNamed(name);
    const met = [wildcard === undefined ? undefined : this.wildcards.at[wildcard], named === undefined ? undefined : this.named.at[named]].filter((i): i is number => i !== undefined);
    if (met.length === 0) return undefined;
    const other = Math.min(...met);
    const { name: otherName, source } = this.otherSources[other] as { name: string; source: string };
    return { reason: 'other-source', detail: `meets ${otherName}, which ${source} serves` };
  }
}

let kept: NameGuard | undefined;

/** The guard for this spec's names; the last one is kept, as the cluster's names rarely change. */
export function nameGuard(spec: ClusterSpec): NameGuard {
  // A node is served by its name under the domain, and by its name as given: a dotted one (w0.corp.example.net) is a name of its own.
  const nodeNames = spec.nodes.flatMap((n) => (n.name.endsWith(`.${spec.domain}`) ? [n.name] : n.name.includes('.') ? [`${n.name}.${spec.domain}`, n.name] : [`${n.name}.${spec.domain}`]));
  const roots = [`api.${spec.domain}`, `api-int.${spec.domain}`, `apps.${spec.domain}`, ...nodeNames];
  const others = spec.extraRecords.map((e) => ({ name: e.name, source: e.source }));
  const key = `${roots.join(' ')}\n${others.map((o) => `${o.name} ${o.source}`).join(' ')}`;
  if (kept?.key !== key) kept = new NameGuard(key, roots, others);
  return kept;
}
