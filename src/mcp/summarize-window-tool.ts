/** `summarize_window`: per channel statistics, spectrum facts and flags of a window (`recordings/window-summary.ts`). */
import { NdsError } from '../core/errors.js';
import { planWindow, windowRows } from '../recordings/signal-window.js';
import { BANDS, MIN_PSD_SAMPLES, psdSegment, summarizeChannel, type ChannelSummary } from '../recordings/window-summary.js';
import type { ToolContext } from './catalogue-tools.js';
import { windowFacts, windowRequest } from './read-window-tool.js';
import type { SummarizeArgs } from './tool-schemas.js';

/** Most values one summary reads (channels × samples): 64 channels of about four minutes at 256 Hz. */
export const MAX_SUMMARY_VALUES = 4 * 1024 * 1024;

export async function summarizeWindowTool({ deps, user }: ToolContext, args: SummarizeArgs) {
  const plan = await planWindow(deps, user, windowRequest(args), { format: 'f32', dtype: 'float32' });
  const values = plan.rows.length * plan.outCount;
  if (values > MAX_SUMMARY_VALUES) {
    throw new NdsError('validation_failed', { message: `summarize_window reads at most ${MAX_SUMMARY_VALUES} values; this window holds ${values}.`, details: ['a shorter window or fewer channels'] });
  }
  const channels: ChannelSummary[] = [];
  for await (const { index, values: row } of windowRows(deps, plan)) {
    const c = plan.group.channels[plan.rows[index]!]!;
    channels.push(summarizeChannel(row, plan.rate, { label: c.label, type: c.type, unit: c.unit, status: c.status, range: c.range }));
  }
  const segment = plan.outCount >= MIN_PSD_SAMPLES ? psdSegment(plan.outCount, plan.rate) : null;
  const { shape: _shape, channels: _labels, types: _types, units: _units, ...facts } = windowFacts(args, plan);
  return {
    ...facts,
    n_samples: plan.outCount,
    duration_s: plan.outCount / plan.rate,
    psd: { method: 'welch, Hann window, half-overlapping segments, one-sided density', segment_samples: segment, resolution_hz: segment ? plan.rate / segment : null },
    bands_hz: BANDS,
    channels,
  };
}
