/** The command line of a benchmark: `--name value` options and bare flags (`args.includes('--flag')`). */
export const args = process.argv.slice(2);

/** The value after `--name`, or `fallback` when the option is not given. */
export function option(name: string, fallback: string): string {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1]! : fallback;
}
