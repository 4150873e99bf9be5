/** BrainVision `.vmrk` markers: `Mk<n>=<type>,<description>,<position>,<size>,<channel>[,<date>]`, 1-based positions. */
import { parseIni } from './ini-file.js';
import { decodeDeclared } from './text-decode.js';

export interface BrainVisionMarker {
  type: string;
  description: string;
  /** 0-based sample index. */
  sample: number;
  size: number;
  channel: number;
  date: string | undefined;
}

export function parseBrainVisionMarkers(bytes: Uint8Array): BrainVisionMarker[] {
  const ini = parseIni(decodeDeclared(bytes).text);
  const markers: BrainVisionMarker[] = [];
  const section = ini.get('marker infos');
  if (!section) return markers;
  const entries = [...section.entries()]
    .filter(([key]) => /^mk\d+$/.test(key))
    .sort((a, b) => Number(a[0].slice(2)) - Number(b[0].slice(2)));
  for (const [, value] of entries) {
    const [type = '', description = '', position = '', size = '', channel = '', date] = value.split(',');
    const pos = Number(position);
    if (!Number.isInteger(pos) || pos < 1) continue;
    markers.push({
      type: type.replaceAll('\\1', ','),
      description: description.replaceAll('\\1', ','),
      sample: pos - 1,
      size: Number.isFinite(Number(size)) && size !== '' ? Number(size) : 1,
      channel: Number(channel) || 0,
      date: date?.trim() || undefined,
    });
  }
  return markers;
}

/** `YYYYMMDDhhmmssuuuuuu` of a New Segment marker as a naive ISO date-time, or null (all zeros, malformed). */
export function markerDateToIso(date: string | undefined): string | null {
  const m = /^(\d{4})(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)(\d{6})$/.exec(date ?? '');
  if (!m || Number(m[1]) === 0 || Number(m[2]) < 1 || Number(m[2]) > 12 || Number(m[3]) < 1 || Number(m[3]) > 31) return null;
  const base = `${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}`;
  return m[7] === '000000' ? base : `${base}.${m[7]}`;
}
