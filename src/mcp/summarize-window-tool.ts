import type { ToolContext } from './catalogue-tools.js';
import type { SummarizeArgs } from './tool-schemas.js';
export async function summarizeWindowTool(_ctx: ToolContext, _args: SummarizeArgs): Promise<Record<string, unknown>> {
  return {};
}
