/**
 * Server-rendered HTML for nds pages: an escaping template tag and the page shell.
 * Pages work without JavaScript; scripts only add to them.
 */

export class SafeHtml {
  readonly value: string;
  constructor(value: string) {
    this.value = value;
  }
  toString(): string {
    return this.value;
  }
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch]!);
}

type Part = SafeHtml | string | number | boolean | null | undefined | Part[];

function render(part: Part): string {
  if (part === null || part === undefined || part === false) return '';
  if (Array.isArray(part)) return part.map(render).join('');
  if (part instanceof SafeHtml) return part.value;
  return escapeHtml(String(part));
}

/** `html\`<p>${name}</p>\``: interpolated values are escaped unless they are `SafeHtml` (nested templates). */
export function html(strings: TemplateStringsArray, ...values: Part[]): SafeHtml {
  let out = strings[0];
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1];
  return new SafeHtml(out);
}

export interface PageOptions {
  title: string;
  /** Username of the signed-in person, for the header; undefined when signed out. */
  username?: string;
  body: SafeHtml;
  /** Extra elements for <head> (scripts, styles). */
  head?: SafeHtml;
}

export function page(options: PageOptions): string {
  return `<!doctype html>${html`<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${options.title} · nds</title>
<link rel="stylesheet" href="/assets/nds.css">
${options.head ?? ''}
</head>
<body>
<header class="top"><a class="brand" href="/">nds</a>
<nav><a href="/">Search</a><a href="/datasets">All datasets</a>${options.username ? html`<a href="/account">${options.username}</a>` : html`<a href="/login">Sign in</a>`}</nav></header>
<main>${options.body}</main>
</body>
</html>`.value}`;
}
