/** The style sheet of the dataset pages and their viewer, served at `/assets/viewer.css` (`assets.ts`). */

export const viewerStylesheetPath = '/assets/viewer.css';

export const VIEWER_CSS = `
main { max-width: 82rem; }
.viewer { outline: none; background: #fff; border: 1px solid var(--line, #d8dee4); border-radius: 6px; padding: .5rem; }
.viewer:focus-visible { border-color: var(--accent, #1f5fbf); }
.viewer-bar { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; margin-bottom: .4rem; font-size: .9rem; }
.viewer-bar label { display: flex; gap: .4rem; align-items: center; }
.viewer-bar button { padding: .2rem .6rem; }
.viewer-bar [hidden] { display: none; }
.viewer-bar select, .viewer-bar input { font-size: .85rem; }
.viewer-tools { display: contents; }
.viewer-scales { display: inline-flex; gap: .6rem; align-items: center; }
.viewer-scales > span { display: inline-flex; gap: .25rem; align-items: center; }
.viewer-scales button { padding: 0 .35rem; }
.viewer-lines { font-size: .85rem; min-height: 1.3em; display: flex; gap: 1rem; flex-wrap: wrap; }
.viewer-status, .viewer-note { color: var(--muted, #5f6b76); }
.viewer-note { color: #9a5b00; }
.viewer-readout { font-variant-numeric: tabular-nums; }
.viewer-main { display: flex; gap: .5rem; }
.viewer-plot { position: relative; flex: 1; min-width: 0; }
.viewer-plot canvas { display: block; width: 100%; height: 560px; }
.viewer-traces { cursor: grab; }
.viewer-overlay { position: absolute; inset: 0; pointer-events: none; }
.viewer-panel { width: 17rem; max-height: 560px; overflow: auto; font-size: .85rem; border-left: 1px solid var(--line, #d8dee4); padding-left: .5rem; }
.viewer-panel table { width: 100%; border-collapse: collapse; }
.viewer-panel td { padding: .1rem .3rem; cursor: pointer; white-space: nowrap; }
.viewer-panel label { overflow-wrap: anywhere; }
/* Fixed columns: type and value give way (ellipsis, the whole text in the title), so time and duration are read
   whole in a 17 rem panel whatever the events are called. */
.viewer-events { table-layout: fixed; }
.viewer-events td { overflow: hidden; text-overflow: ellipsis; }
.viewer-events .clip { overflow: hidden; text-overflow: ellipsis; }
.viewer-events thead td:first-child { width: 32%; }
.viewer-events thead td:last-child { width: 22%; }
.viewer-events td:last-child { text-align: right; font-variant-numeric: tabular-nums; }
.viewer-panel tr[aria-current] td { background: #fff3e0; }
.viewer-panel label { display: block; }
.viewer-spectrum { display: flex; flex-wrap: wrap; gap: .5rem; margin-top: .4rem; }
.viewer-spectrum-head { width: 100%; font-size: .85rem; }
.viewer-spectrum canvas { height: 260px; flex: 1 1 20rem; min-width: 0; }
.viewer-psd-box { flex: 1 1 20rem; min-width: 0; margin: 0; display: flex; flex-direction: column; }
.viewer-psd-box canvas { flex: none; width: 100%; }
.viewer-spectrum-legend { list-style: none; margin: .2rem 0 0; padding: 0; display: flex; flex-wrap: wrap; gap: .1rem .8rem; font-size: .8rem; }
.viewer-spectrum-legend li { display: inline-flex; align-items: center; gap: .3rem; white-space: nowrap; }
.viewer-spectrum-legend .swatch { display: inline-block; width: 1.2em; height: 3px; }
.viewer-help { position: absolute; top: 3rem; left: 50%; transform: translateX(-50%); background: #fff; border: 1px solid #888; border-radius: 6px; padding: .5rem 1rem; box-shadow: 0 4px 20px #0003; z-index: 5; }
.viewer-help dl { display: grid; grid-template-columns: auto auto; gap: .1rem 1rem; margin: 0; }
.viewer-help dt { font-family: monospace; }
.viewer { position: relative; }
.viewer:fullscreen { padding: .5rem; overflow: auto; }
.viewer:fullscreen .viewer-plot canvas { height: calc(100vh - 7rem); }
.viewer-embed { margin: 0; }
.viewer-embed .viewer { border: 0; }
.viewer [hidden] { display: none !important; }
/* The recordings table scrolls inside its own box on a narrow screen instead of widening the page; long paths break. */
.recordings-scroll { max-width: 100%; overflow-x: auto; }
.recordings { width: 100%; }
.recordings td:first-child { overflow-wrap: anywhere; word-break: break-word; }
@media (max-width: 40rem) {
  .recordings th, .recordings td { padding: .2rem .3rem; font-size: .85rem; }
  .viewer-panel { width: 100%; border-left: 0; padding-left: 0; }
  .viewer-main { flex-wrap: wrap; }
}
/* The annotation mode: a crosshair on the traces, the form over the plot's top right. */
.viewer[data-annotating="true"] .viewer-traces { cursor: crosshair; }
.viewer-bar button[aria-pressed="true"] { background: var(--accent, #1f5fbf); color: #fff; }
.viewer-annotation-form { position: absolute; top: 22px; right: 12px; z-index: 4; width: 18rem; background: #fff; border: 1px solid #888; border-radius: 6px; padding: .5rem .7rem; box-shadow: 0 4px 16px #0003; font-size: .85rem; display: flex; flex-direction: column; gap: .3rem; }
.viewer-annotation-form label { display: grid; grid-template-columns: 6rem 1fr; align-items: center; gap: .4rem; }
.viewer-annotation-form input, .viewer-annotation-form select { font-size: .85rem; min-width: 0; }
.viewer-annotation-form div { display: flex; gap: .4rem; }
.viewer-annotation-message { margin: 0; color: var(--muted, #5f6b76); }
.viewer-annotation-message.conflict { color: var(--bad, #b42318); }
.viewer-annotations { margin-bottom: .6rem; }
.viewer-annotations:empty { display: none; }
.viewer-annotations p { margin: .2rem 0; }
.viewer-annotation-rows td .clip { display: block; }
/* The annotations in view scroll in a box of their own, every row 34 px high and the box 10 rows: the list draws
   only the rows scrolled into it (annotation-list.ts, rowHeight and rowsShown). */
.viewer-annotation-scroll { max-height: 340px; overflow-y: auto; overflow-anchor: none; }
.viewer-annotation-rows thead td { position: sticky; top: 0; background: var(--bg, #fff); z-index: 1; }
.viewer-annotation-rows tbody td { height: 34px; box-sizing: border-box; padding-top: 0; padding-bottom: 0; line-height: 16px; }
.viewer-annotation-rows tbody tr.spacer td { height: 0; padding: 0; border: 0; }
.viewer-annotation-rows thead td:first-child { width: 30%; }
.viewer-annotation-rows thead td:last-child { width: 4.4rem; }
.viewer-annotation-rows td.viewer-annotation-actions { overflow: visible; padding: 0; }
.viewer-annotation-actions button { padding: 0 .35rem; margin-left: .15rem; }
.notice.private { color: #6b4e00; border-color: #d4a72c; background: #fff8e1; }
.failures { background: #fff; border: 1px solid var(--bad, #b42318); border-radius: 6px; padding: .25rem 1rem; margin: 1rem 0; }
.failures h2 { color: var(--bad, #b42318); }
.failures li { margin: .4rem 0; overflow-wrap: anywhere; }
.failures .code { font-family: ui-monospace, Menlo, monospace; font-size: .85rem; color: var(--bad, #b42318); }
`.trimStart();
