/**
 * Reads the import graph of a source tree with the TypeScript parser: every static import and re-export,
 * type-only ones included, every `import('...')` with a literal specifier (a lazily loaded module is still
 * a dependency), and every `import('...')` type. Relative specifiers are resolved to files of the tree;
 * package specifiers are kept by name.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

export interface ImportEdge {
  /** Importing file, relative to the tree's root, with `/` separators. */
  from: string;
  /** Imported file of the tree (relative to the root), or undefined for a package. */
  to: string | undefined;
  /** The specifier as written. */
  specifier: string;
  line: number;
  typeOnly: boolean;
}

export interface ImportGraph {
  root: string;
  files: string[];
  edges: ImportEdge[];
}

export function readImportGraph(root: string): ImportGraph {
  const files = listSources(root);
  const known = new Set(files);
  const edges: ImportEdge[] = [];
  for (const file of files) {
    const text = readFileSync(path.join(root, file), 'utf8');
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    const add = (literal: ts.StringLiteralLike, typeOnly: boolean) => {
      const specifier = literal.text;
      const line = source.getLineAndCharacterOfPosition(literal.getStart(source)).line + 1;
      edges.push({ from: file, to: resolve(file, specifier, known), specifier, line, typeOnly });
    };
    const visit = (node: ts.Node): void => {
      if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
        add(node.moduleSpecifier, isTypeOnlyImport(node));
      } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
        add(node.moduleSpecifier, node.isTypeOnly);
      } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
        const [arg] = node.arguments;
        if (arg && ts.isStringLiteralLike(arg)) add(arg, false);
      } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
        add(node.argument.literal, true);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return { root, files, edges };
}

function isTypeOnlyImport(node: ts.ImportDeclaration): boolean {
  const clause = node.importClause;
  if (!clause) return false;
  if (clause.isTypeOnly) return true;
  const named = clause.namedBindings;
  return !clause.name && !!named && ts.isNamedImports(named) && named.elements.length > 0 && named.elements.every((e) => e.isTypeOnly);
}

function resolve(from: string, specifier: string, known: Set<string>): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const joined = path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier));
  for (const candidate of [joined.replace(/\.js$/, '.ts'), joined, `${joined}.ts`, `${joined}/index.ts`]) {
    if (known.has(candidate)) return candidate;
  }
  return joined;
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

/** Strongly connected components of more than one node (or a node importing itself), by Tarjan's algorithm. */
export function cycles<T>(nodes: Iterable<T>, next: (node: T) => Iterable<T>): T[][] {
  const index = new Map<T, number>();
  const low = new Map<T, number>();
  const onStack = new Set<T>();
  const stack: T[] = [];
  const found: T[][] = [];
  let counter = 0;
  const connect = (v: T): void => {
    index.set(v, counter);
    low.set(v, counter);
    counter++;
    stack.push(v);
    onStack.add(v);
    for (const w of next(v)) {
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: T[] = [];
      let w: T;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || [...next(v)].includes(v)) found.push(component.reverse());
    }
  };
  for (const v of nodes) if (!index.has(v)) connect(v);
  return found;
}
