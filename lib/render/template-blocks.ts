import { labelCount } from '../grammar/validate.js';
import { LB_NAMES, type NameRecord } from '../model.js';
import { sameObjects } from '../sources/per-object.js';
import { lowerBound } from '../resolve/sorted.js';
import { compareSpecificity, escapeDots } from '../resolve/specificity.js';

/** One pair of CoreDNS `template` blocks (A and AAAA): the names it matches and the records it answers. */
export interface TemplateBlock {
  /** What the block serves, for the comment above it: the name (or the first and last of a group) and its sources. */
  readonly comment: string;
  readonly zone: string;
  /** Anchored RE2 regex of the query names (lower case, with the trailing dot). */
  readonly match: string;
  /** The answer records of the A block, then the AAAA block: a chain's CNAMEs, then its addresses. */
  readonly a: readonly string[];
  readonly aaaa: readonly string[];
}

const GO_NAME = '{{ .Name }}';
/** The regex's capture of the query name's parent (with its trailing dot), in a block that captures it. */
const GO_PARENT = '{{ index .Match 1 }}';
/** The sources named in a group's comment; the rest are counted (`display` lists every one). */
const COMMENT_SOURCES = 3;
/**
 * Names in one block at most: with names of 253 characters its regex stays far below the
 * size Go's regexp compiles (about 3 million instructions), and a query tries fewer branches.
 */
const BLOCK_NAMES = 1000;
const LB_SOURCES: ReadonlySet<string> = new Set(LB_NAMES);

/** The labels after the first. */
const parentOf = (name: string): string => name.slice(name.indexOf('.') + 1);

/**
 * `target` as an answer field, pushed as two parts whose concatenation is the field: the query
 * name itself, a name under it or under its parent written relative to `{{ .Name }}` or the
 * captured parent, else absolute. Relative fields let the names of one Gateway share a block:
 * `klb.<host>` and `<geo>.klb.<host>` are the same answer for every host. A wildcard's query
 * name is not the wildcard: only its first owner is relative there. Two parts, not one string:
 * this runs for every hop of every name, and the field itself is needed once per block.
 * Whether the field is relative to the captured parent.
 */
function pushRelative(parts: string[], target: string, name: string, relativeParent: boolean): boolean {
  if (name.startsWith('*.')) parts.push(target, '.');
  else if (target === name) parts.push('', GO_NAME);
  else if (isUnder(target, name)) parts.push(target.slice(0, -name.length), GO_NAME);
  else if (relativeParent && isUnder(target, parentOf(name))) {
    parts.push(target.slice(0, -parentOf(name).length), GO_PARENT);
    return true;
  } else parts.push(target, '.');
  return false;
}

/** `name` is a label or more under `root` (compared in place: this runs for every hop of every name). */
const isUnder = (name: string, root: string): boolean => name.length > root.length && name.charCodeAt(name.length - root.length - 1) === 0x2e && name.endsWith(root);

/** What a name answers, relative to the query name: its CNAME hops, and the owner and TTL of its addresses. */
interface Shape {
  readonly chain: readonly string[];
  readonly owner: string;
  readonly ttl: number;
}

/** The labels every name is below by one label or more; compared in place, as most names of a group share their zone. */
function zoneAbove(names: readonly string[]): string {
  let zone = parentOf(names[0] ?? '');
  for (const name of names) {
    while (zone !== '' && !isUnder(name, zone)) {
      const dot = zone.indexOf('.');
      zone = dot < 0 ? '' : zone.slice(dot + 1);
    }
  }
  return zone;
}

/** `^(?:a|b)\.zone\.$` for names a.zone and b.zone: sorted, so RE2 factors neighbours' common prefixes. */
function alternation(names: readonly string[], zone: string): string {
  // Escaped once joined: no name holds a `|`.
  const prefixes = escapeDots(names.map((n) => n.slice(0, -zone.length - 1)).sort().join('|'));
  return `${names.length === 1 ? prefixes : `(?:${prefixes})`}\\.${escapeDots(zone)}\\.`;
}

interface Group {
  readonly members: NameRecord[];
  readonly a: readonly string[];
  readonly aaaa: readonly string[];
  /** The answers use the captured parent: members share their first label, the regex captures the rest. */
  readonly captured: boolean;
}

function blockOf({ members, a, aaaa, captured }: Group): TemplateBlock {
  const first = members[0] as NameRecord;
  const sources = [...new Set(members.map((m) => m.source))];
  const from = `${sources.slice(0, COMMENT_SOURCES).join(', ')}${sources.length > COMMENT_SOURCES ? ` and ${sources.length - COMMENT_SOURCES} more` : ''}`;
  // The first and last names by name: found in one pass, as a block holds up to 1,000.
  let [low, high] = [first.name, first.name];
  for (const { name } of members) {
    if (name < low) low = name;
    if (name > high) high = name;
  }
  // ASCII only: one character past Latin-1 makes V8 keep the whole Corefile two bytes a character.
  const comment = members.length === 1 ? `${first.name} (${from})` : `${members.length} names, ${low} ... ${high} (${from})`;
  if (captured) {
    const parents = members.map((m) => parentOf(m.name));
    const zone = zoneAbove(parents);
    const label = escapeDots(first.name.slice(0, first.name.indexOf('.')));
    return { comment, zone, match: `^${label}\\.(${alternation(parents, zone)})$`, a, aaaa };
  }
  if (members.length === 1) return { comment, zone: first.zone, match: first.match, a, aaaa };
  const wildcard = first.name.startsWith('*.');
  const bodies = members.map((m) => (wildcard ? m.name.slice(2) : m.name));
  const zone = zoneAbove(bodies);
  return { comment, zone, match: `^${wildcard ? '(?:[^.]+\\.)+' : ''}${alternation(bodies, zone)}$`, a, aaaa };
}

/** Where a name goes: names with one key answer alike, and share one placement. */
interface Placement {
  readonly key: string;
  readonly shape: Shape;
  readonly captured: boolean;
}

/** Records are kept across record sets while their answers stay (see record-set.ts): so are their blocks. */
const blocksByFirst = new WeakMap<NameRecord, { members: readonly NameRecord[]; placement: Placement; block: TemplateBlock }>();

/**
 * `placements`: those of the keys laid out, so that 25,000 names are a few hundred
 * placements. A name with its own block is keyed by its name alone: its placement is made anew.
 */
function placementOf(n: NameRecord, clusterTtl: number, placements: Map<string, Placement>): Placement {
  const wildcard = n.name.startsWith('*.');
  const body = wildcard ? n.name.slice(2) : n.name;
  const labels = labelCount(body);
  // A captured parent needs a zone above it: three labels at least. Without a parent-relative
  // field the answers are the same either way.
  const relativeParent = !wildcard && labels >= 3;
  const hops = n.chain ?? [];
  // The key's parts: two for the tier, the top-level label, then per hop its owner (two
  // parts), TTL and target (two), then the address owner (two), TTL and addresses.
  // Strings only: join has a fast path for them, and numbers would take the slow one.
  const parts: string[] = ['', '', body.slice(body.lastIndexOf('.') + 1)];
  let captured = false;
  for (let i = 0; i < hops.length; i++) {
    const hop = hops[i] as NonNullable<NameRecord['chain']>[number];
    if (i === 0) parts.push('', GO_NAME);
    else captured = pushRelative(parts, hop.owner, n.name, relativeParent) || captured;
    parts.push(String(hop.ttl));
    captured = pushRelative(parts, hop.target, n.name, relativeParent) || captured;
  }
  if (n.addressOwner) captured = pushRelative(parts, n.addressOwner, n.name, relativeParent) || captured;
  else parts.push('', GO_NAME);
  const ttl = n.addressTtl ?? clusterTtl;
  // Exact names never overlap, nor do wildcards of one depth: a group keeps the order's meaning.
  if (wildcard) [parts[0], parts[1]] = ['*', String(labels)];
  else if (captured) [parts[0], parts[1]] = ['^', body.slice(0, body.indexOf('.'))];
  const single = LB_SOURCES.has(n.source) || labels === 1;
  // Joined, not a template: a flat string, hashed as it is.
  if (!single) {
    parts.push(String(ttl));
    for (const ip of n.v4) parts.push(ip);
    parts.push('|');
    for (const ip of n.v6) parts.push(ip);
  }
  const key = single ? `=${n.name}` : parts.join('\n');
  const kept = single ? undefined : placements.get(key);
  if (kept !== undefined) return kept;
  const at = 3 + hops.length * 5;
  const field = (i: number): string => `${parts[i] as string}${parts[i + 1] as string}`;
  const chain = hops.map((_, h) => `${field(3 + h * 5)} ${parts[5 + h * 5] as string} IN CNAME ${field(6 + h * 5)}`);
  const owner = field(at);
  const placement = { key, shape: { chain, owner, ttl }, captured };
  if (!single) placements.set(key, placement);
  return placement;
}

/** The block of these members placed so; kept while both are the same objects (a cluster TTL change makes new placements). */
function keptBlockOf(members: NameRecord[], placement: Placement): TemplateBlock {
  const first = members[0] as NameRecord;
  const kept = blocksByFirst.get(first);
  if (kept !== undefined && kept.placement === placement && sameObjects(kept.members, members)) return kept.block;
  const { shape, captured } = placement;
  const records = (type: string, ips: readonly string[]) => [...shape.chain, ...ips.map((ip) => `${shape.owner} ${shape.ttl} IN ${type} ${ip}`)];
  const block = blockOf({ members, a: records('A', first.v4), aaaa: records('AAAA', first.v6), captured });
  blocksByFirst.set(first, { members, placement, block });
  return block;
}

/** One key's names cut into blocks of BLOCK_NAMES, each placed at its first name (a name of its own block is not kept in `placements`). */
function blocksOfKey(names: readonly NameRecord[], key: string, positions: readonly number[], clusterTtl: number, placements: Map<string, Placement>): { at: number; block: TemplateBlock }[] {
  const out: { at: number; block: TemplateBlock }[] = [];
  for (let from = 0; from < positions.length; from += BLOCK_NAMES) {
    const members = positions.slice(from, from + BLOCK_NAMES).map((p) => names[p] as NameRecord);
    const placement = placements.get(key) ?? placementOf(members[0] as NameRecord, clusterTtl, placements);
    out.push({ at: positions[from] as number, block: keptBlockOf(members, placement) });
  }
  return out;
}

/**
 * The last names laid out: each name's key, each key's positions, each key's blocks. A
 * record set of the same length is laid out again for the positions whose records changed:
 * a Gateway's new address touches its own names' keys, and the rest keep their blocks.
 */
interface Layout {
  readonly names: readonly NameRecord[];
  readonly clusterTtl: number;
  readonly keys: string[];
  readonly placements: Map<string, Placement>;
  readonly positions: Map<string, number[]>;
  readonly blocks: Map<string, { at: number; block: TemplateBlock }[]>;
  readonly ordered: readonly TemplateBlock[];
}
let last: Layout | undefined;

/** More changed names than this share of the set: laying out from nothing is cheaper. */
const RELAYOUT_SHARE = 0.25;

/**
 * From nothing; the records `previous` laid out keep their keys and placements. Both lists
 * are in specificity order, so one walk finds them, without an index of the old records.
 */
function layOut(names: readonly NameRecord[], clusterTtl: number, previous: Layout | undefined): Layout {
  const before = previous?.clusterTtl === clusterTtl ? previous : undefined;
  const old = before?.names ?? [];
  const placements = new Map<string, Placement>();
  let j = 0;
  const keys = names.map((n) => {
    while (j < old.length && (old[j] as NameRecord).name !== n.name && compareSpecificity((old[j] as NameRecord).name, n.name) < 0) j++;
    const kept = old[j] === n ? before?.placements.get(before.keys[j] as string) : undefined;
    if (old[j]?.name === n.name) j++;
    if (kept === undefined) return placementOf(n, clusterTtl, placements).key;
    placements.set(kept.key, kept);
    return kept.key;
  });
  const positions = new Map<string, number[]>();
  keys.forEach((key, i) => {
    const list = positions.get(key);
    if (list === undefined) positions.set(key, [i]);
    else list.push(i);
  });
  const blocks = new Map([...positions].map(([key, list]) => [key, blocksOfKey(names, key, list, clusterTtl, placements)]));
  return { names, clusterTtl, keys, placements, positions, blocks, ordered: inOrder(blocks) };
}

const inOrder = (blocks: Layout['blocks']): TemplateBlock[] => [...blocks.values()].flat().sort((x, y) => x.at - y.at).map((b) => b.block);

/** `last` with the records at `changed` replaced by those of `names`; positions stay in ascending order. */
function relayOut(layout: Layout, names: readonly NameRecord[], changed: readonly number[]): Layout {
  const touched = new Set<string>();
  for (const i of changed) {
    const before = layout.keys[i] as string;
    const after = placementOf(names[i] as NameRecord, layout.clusterTtl, layout.placements).key;
    touched.add(before).add(after);
    if (before === after) continue;
    layout.keys[i] = after;
    const from = layout.positions.get(before) as number[];
    from.splice(from.indexOf(i), 1);
    if (from.length === 0) layout.positions.delete(before);
    const to = layout.positions.get(after);
    if (to === undefined) layout.positions.set(after, [i]);
    else to.splice(lowerBound(to, (p) => p < i), 0, i);
  }
  for (const key of touched) {
    const list = layout.positions.get(key);
    if (list === undefined) {
      layout.blocks.delete(key);
      layout.placements.delete(key);
    } else {
      layout.blocks.set(key, blocksOfKey(names, key, list, layout.clusterTtl, layout.placements));
    }
  }
  return { ...layout, names, ordered: inOrder(layout.blocks) };
}

/**
 * The template blocks that serve `names` (in the record set's order: exact names first, then
 * the deepest wildcard). Names whose answers are the same once written relative to the query
 * name share one block with an alternation regex: 10,000 Gateway hosts in 200 Gateways are a
 * few hundred blocks, not 10,000. The cluster's own LB names keep a block each, where an
 * admin looks for them. A block is at the place of its first name, and holds the names of its
 * key that follow, up to BLOCK_NAMES.
 */
export function templateBlocks(names: readonly NameRecord[], clusterTtl: number): readonly TemplateBlock[] {
  const layout = last;
  if (layout?.names === names && layout.clusterTtl === clusterTtl) return layout.ordered;
  if (layout === undefined || layout.clusterTtl !== clusterTtl || layout.names.length !== names.length) return (last = layOut(names, clusterTtl, layout)).ordered;
  const changed: number[] = [];
  for (let i = 0; i < names.length; i++) if (names[i] !== layout.names[i]) changed.push(i);
  last = changed.length > names.length * RELAYOUT_SHARE ? layOut(names, clusterTtl, layout) : relayOut(layout, names, changed);
  return last.ordered;
}
