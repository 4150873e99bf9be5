/**
 * How events are drawn for a window: as lines through the plot with labels and spans while they are few on
 * screen; at coarse zoom, as ticks and a density strip in the band above the plot, so they never cover the
 * traces. Colours by event type. Pure.
 */

/** One event as the viewer and the server's plots mark it. */
export interface EventMarker {
  onset: number;
  duration: number;
  /** The event's type (`trial_type`, else `value`, else the file's own marker text); filters and colours go by it. */
  label: string;
  /** The `_events.tsv` `value` column as written (`n/a` as null); undefined when the store has no such column. */
  value?: string | null | undefined;
}

export const eventPalette = ['#e07b00', '#0a8f8f', '#c2185b', '#5e35b1', '#7cb342', '#6d4c41', '#1e88e5', '#f4511e'];

/** A colour per event label, in order of first appearance in the recording. */
export function eventColours(events: readonly EventMarker[]): Map<string, string> {
  const colours = new Map<string, string>();
  for (const e of events) if (!colours.has(e.label)) colours.set(e.label, eventPalette[colours.size % eventPalette.length]!);
  return colours;
}

export interface PlacedEvent {
  onset: number;
  duration: number;
  label: string;
  colour: string;
  /** Pixel column of the onset (from the canvas' left edge) and of the end of its span. */
  x: number;
  x1: number;
}

export interface EventPlacement {
  /** `lines`: full-height lines with labels; `strip`: ticks and density above the plot only. */
  mode: 'lines' | 'strip';
  events: PlacedEvent[];
}

/** At most one event line every this many pixels on average before switching to the strip. */
export const pixelsPerLine = 40;

export function placeEvents(
  events: readonly EventMarker[],
  colours: ReadonlyMap<string, string>,
  view: { startSeconds: number; secondsPerPixel: number; plotLeft: number; plotWidth: number },
  hidden: ReadonlySet<string> = new Set(),
): EventPlacement {
  const end = view.startSeconds + view.plotWidth * view.secondsPerPixel;
  const placed: PlacedEvent[] = [];
  for (const e of events) {
    if (hidden.has(e.label)) continue;
    if (e.onset + e.duration < view.startSeconds || e.onset >= end) continue;
    const x = Math.round(view.plotLeft + (e.onset - view.startSeconds) / view.secondsPerPixel);
    const x1 = Math.round(view.plotLeft + (e.onset + e.duration - view.startSeconds) / view.secondsPerPixel);
    placed.push({ onset: e.onset, duration: e.duration, label: e.label, colour: colours.get(e.label) ?? eventPalette[0]!, x, x1 });
  }
  return { mode: placed.length * pixelsPerLine <= view.plotWidth ? 'lines' : 'strip', events: placed };
}

/** The index of the next (direction 1) or previous (−1) event from `seconds`, skipping hidden types. */
export function stepEvent(events: readonly EventMarker[], seconds: number, direction: 1 | -1, hidden: ReadonlySet<string> = new Set()): number | undefined {
  const epsilon = 1e-6;
  if (direction > 0) {
    const i = events.findIndex((e) => !hidden.has(e.label) && e.onset > seconds + epsilon);
    return i >= 0 ? i : undefined;
  }
  for (let i = events.length - 1; i >= 0; i--) if (!hidden.has(events[i]!.label) && events[i]!.onset < seconds - epsilon) return i;
  return undefined;
}
