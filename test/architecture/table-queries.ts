/**
 * Finds where a source tree queries a table, with the TypeScript parser (so comments, messages and CLI
 * command names that merely say the table's name do not count): a Kysely call naming it (`selectFrom`,
 * `updateTable`, `insertInto`, `deleteFrom`, the joins, `sql.table`), a column qualified by it
 * (`'datasets.owner_id'`), and raw SQL in a `sql` template or `sql.raw` string (`from`, `join`, `update`,
 * `into` the table).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

export interface TableQuery {
  /** File relative to the tree's root, `/`-separated. */
  file: string;
  line: number;
  /** `read` for a raw-SQL select or join, `write` for a raw-SQL update or insert, `builder` for Kysely calls and qualified columns. */
  kind: 'read' | 'write' | 'builder';
  /** The code that queries, as written (shortened). */
  text: string;
}

export interface TableOwnership {
  table: string;
  /** The one file that owns the table's queries. */
  owner: string;
  /** Files whose raw SQL may read the table (joins and selects in `sql` templates), but not write it. */
  rawReaders: string[];
  /** Folders left out, such as the migrations, which shape the table and are frozen in time. */
  exemptFolders: string[];
}

const BUILDER_CALLS = new Set(['selectFrom', 'updateTable', 'insertInto', 'deleteFrom', 'innerJoin', 'leftJoin', 'rightJoin', 'fullJoin', 'crossJoin', 'mergeInto', 'replaceInto']);

export function findTableQueries(root: string, table: string): TableQuery[] {
  const found: TableQuery[] = [];
  const tableRef = new RegExp(`^(?:public\\.)?${table}(?:\\s+as\\s+\\w+)?$`);
  const qualifiedColumn = new RegExp(`^${table}\\.(?:\\w+|\\*)(?:\\s+as\\s+\\w+)?$`);
  const rawSql = new RegExp(`\\b(from|join|update|into)\\s+(?:"?public"?\\.)?"?${table}"?(?![\\w$.])`, 'gi');
  for (const file of listSources(root)) {
    const source = parsed(root, file);
    const lineOf = (pos: number) => source.getLineAndCharacterOfPosition(pos).line + 1;
    const add = (kind: TableQuery['kind'], at: number, code: string) => found.push({ file, line: lineOf(at), kind, text: code.replace(/\s+/g, ' ').slice(0, 120) });
    const scanRaw = (node: ts.Node) => {
      const raw = node.getText(source);
      for (const m of raw.matchAll(rawSql)) add(/^(update|into)$/i.test(m[1]) ? 'write' : 'read', node.getStart(source) + m.index!, raw.slice(m.index!, m.index! + 80));
    };
    const addNode = (node: ts.Node) => add('builder', node.getStart(source), node.getText(source));
    const visit = (node: ts.Node): void => {
      if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) return;
      if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
        const name = node.expression.name.text;
        const onSql = ts.isIdentifier(node.expression.expression) && node.expression.expression.text === 'sql';
        const [first] = node.arguments;
        const names = first && ts.isArrayLiteralExpression(first) ? [...first.elements] : first ? [first] : [];
        const namesTable = names.some((a) => ts.isStringLiteralLike(a) && tableRef.test(a.text));
        if (namesTable && (BUILDER_CALLS.has(name) || (onSql && (name === 'table' || name === 'id')))) addNode(node);
        if (onSql && name === 'raw' && first && ts.isStringLiteralLike(first)) scanRaw(first);
      }
      if (ts.isTaggedTemplateExpression(node) && ts.isIdentifier(node.tag) && node.tag.text === 'sql') scanRaw(node.template);
      if (ts.isStringLiteralLike(node) && qualifiedColumn.test(node.text)) addNode(node);
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

/** Parsed files by their path, kept while their text is the same: each table's check walks the whole tree. */
const parsedFiles = new Map<string, ts.SourceFile>();

function parsed(root: string, file: string): ts.SourceFile {
  const full = path.join(root, file);
  const text = readFileSync(full, 'utf8');
  const known = parsedFiles.get(full);
  if (known?.text === text) return known;
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  parsedFiles.set(full, source);
  return source;
}

/** Every query of the table outside its owner, as `file:line: ...`; raw reads in `rawReaders` files are allowed. */
export function checkTableOwnership(root: string, rule: TableOwnership): string[] {
  return findTableQueries(root, rule.table)
    .filter((q) => q.file !== rule.owner && !rule.exemptFolders.some((f) => q.file.startsWith(f)) && !(q.kind === 'read' && rule.rawReaders.includes(q.file)))
    .map((q) => `${q.file}:${q.line}: queries ${rule.table} outside ${rule.owner}: ${q.text}`);
}

function listSources(root: string, dir = ''): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
    const rel = dir ? `${dir}/${entry.name}` : entry.name;
    if (entry.isDirectory()) out.push(...listSources(root, rel));
    else if (/\.(ts|mts|tsx)$/.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(rel);
  }
  return out.sort();
}
