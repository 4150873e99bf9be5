/**
 * Static assets of the pages: their style sheets, served with a content hash as their ETag. Pages carry no
 * inline style (the Content-Security-Policy of docs/security.md allows none), so all of it is here.
 */
import { sha256Hex } from '../core/secrets.js';
import { route, type Route } from '../http/route.js';
import { VIEWER_CSS, viewerStylesheetPath } from './viewer-css.js';


const CSS = `
:root { --fg: #1d2125; --muted: #5f6b76; --line: #d8dee4; --bg: #fbfcfd; --accent: #1f5fbf; --bad: #b42318; --good: #1a7f37; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
header.top { display: flex; justify-content: space-between; align-items: center; padding: .75rem 1.25rem; border-bottom: 1px solid var(--line); background: #fff; }
header.top a { color: var(--fg); text-decoration: none; }
.brand { font-weight: 700; letter-spacing: .02em; }
main { max-width: 46rem; margin: 2rem auto; padding: 0 1.25rem; }
h1 { font-size: 1.5rem; margin: 0 0 1rem; }
h2 { font-size: 1.1rem; margin: 1.5rem 0 .5rem; }
a { color: var(--accent); }
section.card { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 1rem 1.25rem; margin: 0 0 1rem; }
form.stack { display: grid; gap: .6rem; max-width: 24rem; }
form.inline { display: inline; margin: 0; }
label { display: grid; gap: .2rem; font-size: .9rem; color: var(--muted); }
input[type=text], input[type=email], input[type=password] { font: inherit; padding: .45rem .6rem; border: 1px solid var(--line); border-radius: 4px; color: var(--fg); }
input.code { font-family: ui-monospace, Menlo, monospace; letter-spacing: .15em; text-transform: uppercase; }
button { font: inherit; padding: .45rem .9rem; border-radius: 4px; border: 1px solid var(--accent); background: var(--accent); color: #fff; cursor: pointer; }
button.secondary { background: #fff; color: var(--accent); }
button.danger { background: #fff; color: var(--bad); border-color: var(--bad); }
.actions { display: flex; gap: .75rem; margin-top: 1rem; }
.notice { padding: .6rem .9rem; border-radius: 4px; margin: 0 0 1rem; border: 1px solid; }
.notice.error { color: var(--bad); border-color: var(--bad); background: #fff5f4; }
.notice.ok { color: var(--good); border-color: var(--good); background: #f3fbf5; }
.muted { color: var(--muted); }
code, .mono { font-family: ui-monospace, Menlo, monospace; }
.secret { display: block; padding: .6rem; background: #f3f5f7; border: 1px solid var(--line); border-radius: 4px; word-break: break-all; }
table { border-collapse: collapse; width: 100%; font-size: .95rem; }
th, td { text-align: left; padding: .4rem .5rem; border-bottom: 1px solid var(--line); vertical-align: middle; }
th { color: var(--muted); font-weight: 600; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .3rem 1rem; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; }
form.stack.wide { max-width: none; }
section.card > h2:first-child { margin-top: .25rem; }
header.top nav { display: flex; gap: 1rem; flex-wrap: wrap; justify-content: flex-end; }
.notice .flush { margin: 0; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
.lead { font-size: 1.05rem; margin: 0 0 1rem; }
form.search { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: .75rem 1rem; margin: 0 0 1rem; }
.search-main { display: flex; gap: .5rem; align-items: end; }
.search-main .grow { flex: 1; }
input[type=search], input[type=number], select, textarea { font: inherit; padding: .45rem .6rem; border: 1px solid var(--line); border-radius: 4px; color: var(--fg); background: #fff; width: 100%; }
textarea { min-height: 6rem; }
.facets summary { cursor: pointer; color: var(--accent); margin-top: .5rem; }
.facet-grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(9.5rem, 1fr)); gap: .6rem; margin-top: .5rem; }
ul.cards { list-style: none; padding: 0; margin: 0; display: grid; grid-template-columns: repeat(auto-fill, minmax(20rem, 1fr)); gap: .75rem; }
.dataset-card { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: .75rem 1rem; min-width: 0; }
.dataset-card h3 { margin: 0 0 .2rem; font-size: 1.05rem; overflow-wrap: anywhere; }
.card-meta { margin: 0 0 .4rem; color: var(--muted); font-size: .9rem; }
.card-description { margin: 0 0 .5rem; font-size: .95rem; }
dl.card-facts { display: grid; grid-template-columns: repeat(3, minmax(0, 1fr)); gap: .3rem .75rem; margin: 0; font-size: .9rem; }
dl.card-facts dt { color: var(--muted); font-size: .8rem; }
dl.card-facts dd { margin: 0; overflow-wrap: anywhere; }
dl.card-facts .card-doi { grid-column: 1 / -1; }
.badge { display: inline-block; padding: 0 .4rem; border-radius: 3px; background: #eef1f4; font-size: .8rem; }
.badge.private { background: #fff8e1; color: #6b4e00; }
nav.paging { display: flex; justify-content: space-between; align-items: center; margin: 1rem 0; }
.table-scroll { overflow-x: auto; }
ul.actions-needed { margin: 0; padding-left: 1.1rem; }
.request { border-top: 1px solid var(--line); padding: .75rem 0; }
.request:first-of-type { border-top: 0; }
.request h3 { margin: 0 0 .25rem; font-size: 1rem; }
.decide { display: flex; gap: .75rem; flex-wrap: wrap; align-items: start; margin-top: .5rem; }
.decide details { flex: 1; min-width: 14rem; }
.decide summary { cursor: pointer; color: var(--bad); }
.decide details form { margin-top: .4rem; }
ul.failures { margin: .25rem 0; padding-left: 1.1rem; font-size: .9rem; }
@media (max-width: 40rem) {
  main { margin: 1rem auto; padding: 0 .75rem; }
  header.top { padding: .6rem .75rem; }
  .search-main { flex-direction: column; align-items: stretch; }
  dl.card-facts { grid-template-columns: repeat(2, minmax(0, 1fr)); }
  table.mine thead { display: none; }
  table.mine tr { display: block; border-bottom: 1px solid var(--line); padding: .4rem 0; }
  table.mine td { display: block; border: 0; padding: .15rem 0; }
}
`.trimStart();

/** A style sheet at `path`, cached an hour and revalidated by its content hash. */
function stylesheetRoute(path: string, css: string, summary: string): Route {
  const etag = `"${sha256Hex(css).slice(0, 16)}"`;
  return route({
    method: 'get',
    path,
    summary,
    access: 'none',
    undocumented: true,
    handler: (c) => {
      c.header('ETag', etag);
      c.header('Cache-Control', 'public, max-age=3600');
      if (c.req.header('if-none-match') === etag) return c.body(null, 304);
      c.header('Content-Type', 'text/css; charset=utf-8');
      return c.body(css);
    },
  });
}

export const assetRoutes: Route[] = [
  stylesheetRoute('/assets/nds.css', CSS, "The pages' style sheet"),
  stylesheetRoute(viewerStylesheetPath, VIEWER_CSS, "The dataset pages' and the viewer's style sheet"),
];
