/**
 * The dependency rules of `docs/architecture.md`, checked over an import graph: every file belongs to a
 * ranked unit (a folder or a top-level file of `src/`), imports point to the same rank or below, no cycle
 * between units nor between files, no Hono below the HTTP glue, browser code imports only itself, and the
 * error vocabulary imports nothing of the project. Each violation names the file and line.
 */
import type { ImportEdge, ImportGraph } from './import-graph.js';
import { cycles } from './import-graph.js';

export interface Rank {
  /**
   * Lower ranks are imported by higher ones; `isolated` units import nothing outside themselves but rank 0,
   * the code shared with them (which, ranked lowest, imports nothing outside itself either).
   */
  rank: number | 'isolated';
  /** `core/` (a folder) or `app.ts` (a file), relative to the source root. */
  units: string[];
}

export interface LayerRules {
  ranks: Rank[];
  /** Units from which frameworks of the HTTP layer are banned: every unit ranked below this one. */
  httpUnit: string;
  /** Packages of the HTTP layer (a name, or a scope ending in `/`). */
  httpPackages: string[];
  /** Files that may import no file of the project. */
  leaves: string[];
}

/** The ranks table of an architecture document: rows `| 3 | \`accounts/\` | ... |`; `—` marks isolated units. */
export function parseRanks(markdown: string): Rank[] {
  const section = markdown.split(/^## /m).find((s) => s.startsWith('Ranks'));
  if (!section) throw new Error('no "## Ranks" section');
  const ranks: Rank[] = [];
  for (const line of section.split('\n')) {
    const m = /^\|\s*(\d+|—)\s*\|([^|]*)\|/.exec(line);
    if (!m) continue;
    const units = [...m[2]!.matchAll(/`([^`]+)`/g)].map((u) => u[1]!);
    ranks.push({ rank: m[1] === '—' ? 'isolated' : Number(m[1]), units });
  }
  return ranks;
}

export function checkLayers(graph: ImportGraph, rules: LayerRules): string[] {
  const problems: string[] = [];
  const unitRank = new Map<string, number | 'isolated'>();
  for (const r of rules.ranks) for (const u of r.units) unitRank.set(u, r.rank);
  // Longest unit first, so `web/viewer/` wins over `web/`.
  const units = [...unitRank.keys()].sort((a, b) => b.length - a.length);
  const unitOf = (file: string) => units.find((u) => (u.endsWith('/') ? file.startsWith(u) : file === u));
  const httpRank = unitRank.get(rules.httpUnit);
  if (typeof httpRank !== 'number') throw new Error(`${rules.httpUnit} has no rank`);

  for (const file of graph.files) if (!unitOf(file)) problems.push(`${file}: belongs to no ranked unit`);

  const unitEdges = new Map<string, Map<string, ImportEdge>>();
  for (const edge of graph.edges) {
    const at = `${edge.from}:${edge.line}`;
    const from = unitOf(edge.from);
    if (!from) continue;
    const fromRank = unitRank.get(from)!;
    if (edge.to === undefined) {
      const isHttp = rules.httpPackages.some((p) => (p.endsWith('/') ? edge.specifier.startsWith(p) : edge.specifier === p || edge.specifier.startsWith(`${p}/`)));
      if (isHttp && (fromRank === 'isolated' || fromRank < httpRank)) problems.push(`${at}: imports ${edge.specifier}, but ${from} ranks below ${rules.httpUnit} and must not know HTTP`);
      continue;
    }
    if (rules.leaves.includes(edge.from)) problems.push(`${at}: ${edge.from} must import nothing of the project, but imports ${edge.to}`);
    const to = unitOf(edge.to);
    if (!to) {
      problems.push(`${at}: imports ${edge.specifier}, which is no file of a ranked unit`);
      continue;
    }
    if (to === from) continue;
    const toRank = unitRank.get(to)!;
    if (toRank === 'isolated' || (fromRank === 'isolated' && toRank !== 0)) problems.push(`${at}: ${from} and ${to} must not import each other (${fromRank === 'isolated' ? from : to} is isolated)`);
    else if (fromRank !== 'isolated' && toRank > fromRank) problems.push(`${at}: imports ${edge.to} upwards (${from} is rank ${fromRank}, ${to} is rank ${toRank})`);
    let byTarget = unitEdges.get(from);
    if (!byTarget) unitEdges.set(from, (byTarget = new Map()));
    if (!byTarget.has(to)) byTarget.set(to, edge);
  }

  for (const cycle of cycles(unitEdges.keys(), (u) => unitEdges.get(u)?.keys() ?? [])) {
    const arrows = cycle.map((u) => {
      const via = [...(unitEdges.get(u) ?? new Map<string, ImportEdge>())].find(([to]) => cycle.includes(to))!;
      return `${u} -> ${via[0]} (${via[1].from}:${via[1].line})`;
    });
    problems.push(`cycle between units: ${arrows.join(', ')}`);
  }

  const fileEdges = new Map<string, Map<string, ImportEdge>>();
  for (const edge of graph.edges) {
    if (!edge.to) continue;
    let byTarget = fileEdges.get(edge.from);
    if (!byTarget) fileEdges.set(edge.from, (byTarget = new Map()));
    if (!byTarget.has(edge.to)) byTarget.set(edge.to, edge);
  }
  for (const cycle of cycles(graph.files, (f) => fileEdges.get(f)?.keys() ?? [])) {
    const arrows = cycle.map((f) => {
      const via = [...(fileEdges.get(f) ?? new Map<string, ImportEdge>())].find(([to]) => cycle.includes(to))!;
      return `${f}:${via[1].line} -> ${via[0]}`;
    });
    problems.push(`cycle between files: ${arrows.join(', ')}`);
  }
  return problems;
}
