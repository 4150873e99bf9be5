/**
 * `plot_window`: a PNG of a window drawn as the viewer draws it (`recordings/window-plot.ts`), and the viewer's
 * address that opens the same view.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { recordingAt } from '../recordings/catalogue.js';
import { plotWindow } from '../recordings/window-plot.js';
import type { ToolContext } from './catalogue-tools.js';
import { windowRequest } from './read-window-tool.js';
import type { PlotArgs } from './tool-schemas.js';
import { answer } from './tool-answer.js';

/** The span drawn when none is asked for: the viewer's first window. */
export const DEFAULT_PLOT_SECONDS = 10;

export async function plotWindowTool({ deps, user }: ToolContext, args: PlotArgs): Promise<CallToolResult> {
  const window = windowRequest(args);
  if (args.duration_s === undefined && args.n_samples === undefined) {
    // The viewer's first window, or what is left of the recording after the start.
    const recording = await recordingAt(deps, user, args.dataset_id, args.path);
    const length = Math.min(...recording.groups.map((g) => g.duration_s));
    const start = args.start_s ?? (args.start_sample !== undefined ? args.start_sample / (recording.groups[0]?.rate ?? 1) : 0);
    if (args.start_sample !== undefined) window.n_samples = Math.max(1, Math.floor(Math.min(DEFAULT_PLOT_SECONDS, length - start) * (recording.groups[0]?.rate ?? 1)));
    else window.duration = Math.max(1e-3, Math.min(DEFAULT_PLOT_SECONDS, length - start));
  }
  const plot = await plotWindow(deps, user, {
    window,
    filter: { hp: args.hp, lp: args.lp, notch: args.notch },
    ref: args.ref,
    scale: args.scale,
    width: args.width,
    height: args.height,
  });
  const viewer = new URLSearchParams({ recording: plot.zarr, group: plot.group });
  for (const [k, v] of plot.viewQuery) viewer.set(k, v);
  return answer(
    {
      dataset_id: args.dataset_id,
      path: args.path,
      group: plot.group,
      start_s: plot.startSeconds,
      span_s: plot.spanSeconds,
      rows: plot.rows,
      scales: plot.scales.map(({ label, scale }) => ({ label, per_division: scale })),
      filter: { hp: args.hp ?? null, lp: args.lp ?? null, notch: args.notch ?? null },
      reference: plot.viewQuery.get('ref') ?? 'own',
      width: plot.layout.width,
      height: plot.layout.height,
      plot: { left: plot.layout.plotLeft, top: plot.layout.plotTop, width: plot.layout.plotWidth, height: plot.layout.plotHeight, row_height: plot.layout.rowHeight },
      events_drawn: plot.events.events.length,
      viewer_url: `${deps.config.publicUrl}/datasets/${args.dataset_id}?${viewer}`,
    },
    [{ type: 'image', data: Buffer.from(plot.png.buffer, plot.png.byteOffset, plot.png.byteLength).toString('base64'), mimeType: 'image/png' }],
  );
}
