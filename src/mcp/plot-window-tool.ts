import type { ToolContext } from './catalogue-tools.js';
import type { PlotArgs } from './tool-schemas.js';
export async function plotWindowTool(_ctx: ToolContext, _args: PlotArgs): Promise<Record<string, unknown>> {
  return {};
}
