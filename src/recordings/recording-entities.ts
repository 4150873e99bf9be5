/** The BIDS entities of a recording, read from the path of its data file (`sub-01/ses-a/eeg/sub-01_..._eeg.edf`). */
import { parseBidsName } from '../formats/bids/bids-name.js';

export interface RecordingEntities {
  subject: string | null;
  session: string | null;
  task: string | null;
  run: string | null;
  acquisition: string | null;
  datatype: string | null;
}

const DATATYPES = new Set(['eeg', 'emg', 'ieeg', 'meg', 'nirs']);

export function recordingEntities(path: string): RecordingEntities {
  const parts = path.split('/');
  const name = parseBidsName(parts.at(-1) ?? '');
  const folder = parts.at(-2);
  const entity = (key: string) => name?.entities.get(key) ?? null;
  const datatype = folder && DATATYPES.has(folder) ? folder : name && DATATYPES.has(name.suffix) ? name.suffix : null;
  return { subject: entity('sub'), session: entity('ses'), task: entity('task'), run: entity('run'), acquisition: entity('acq'), datatype };
}
