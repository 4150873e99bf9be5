/**
 * Reading a page of docs/ as a script: its fenced code blocks of one language, in order, and a shell line's
 * words, so that a test runs exactly what a reader would copy.
 */

/** The bodies of the page's fenced blocks of `lang` (```sh, ```python, ```ts), in order. */
export function codeBlocks(markdown: string, lang: string): string[] {
  return [...markdown.matchAll(new RegExp(`^\`\`\`${lang}\\n([\\s\\S]*?)^\`\`\`$`, 'gm'))].map((m) => m[1]!);
}

/** The command lines of the page's `sh` blocks, in order (blank lines and comments left out). */
export function shellCommands(markdown: string): string[] {
  return codeBlocks(markdown, 'sh').flatMap((block) => block.split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#')));
}

/** A command line's words: spaces separate, double quotes group. */
export function words(line: string): string[] {
  return [...line.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2]!);
}

/** `VAR=value ... command args`: the leading assignments apart from the command's words. */
export function assignmentsAndWords(line: string): { env: Record<string, string>; argv: string[] } {
  const argv = words(line);
  const env: Record<string, string> = {};
  while (argv.length && /^[A-Z_][A-Z0-9_]*=/.test(argv[0]!)) {
    const [name, ...value] = argv.shift()!.split('=');
    env[name!] = value.join('=');
  }
  return { env, argv };
}
