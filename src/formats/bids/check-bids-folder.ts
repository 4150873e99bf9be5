/**
 * The check an upload runs before it sends anything: is this folder a BIDS dataset nds can convert? It looks
 * at what a conversion needs and what BIDS requires of it: `dataset_description.json` (valid JSON with `Name`
 * and `BIDSVersion`), data files in `sub-<label>/[ses-<label>/]<eeg|emg|ieeg>/` named by the BIDS rules, their
 * `_<modality>.json` sidecar (inherited from a higher level or not), their companions (`.vhdr` → `.eeg` and
 * `.vmrk`, `.set` → `.fdt`), and EDF/BDF headers against the file's size (a truncated file is caught here,
 * not after the conversion). Errors stop an upload; warnings are printed and it goes on.
 *
 * The check reads through `BidsFolderSource` (a list of files and a byte reader), so tests can call it on a
 * list of files as well as on a real folder (`bidsFolderOnDisk`).
 */
import path from 'node:path';
import { isConversionError } from '../conversion-errors.js';
import { SourceTree } from '../source-tree.js';
import { parseBrainVisionHeader } from '../readers/brainvision-header.js';
import { parseEdfHeader } from '../readers/edf-header.js';
import { parseBidsName } from './bids-name.js';
import { modalities } from './find-recordings.js';
import { applicableFiles, type DirectoryLister } from './sidecar-files.js';

export interface BidsIssue {
  /** The file concerned (relative, `/`-separated), or null for the folder as a whole. */
  path: string | null;
  message: string;
}

export interface BidsCheck {
  errors: BidsIssue[];
  warnings: BidsIssue[];
  /** Data files nds will convert (primary files in a modality folder). */
  recordings: string[];
}

export interface BidsFolderFile {
  path: string;
  size: number;
}

export interface BidsFolderSource {
  files: BidsFolderFile[];
  /** Up to `length` bytes of a file from its start. */
  read(path: string, length: number): Promise<Uint8Array>;
}

const primaryExtensions = ['.edf', '.bdf', '.vhdr', '.set'];
/** Files that are only a part of a recording: they travel with a primary file. */
const companionExtensions = ['.eeg', '.vmrk', '.fdt'];
/** Headers larger than this are not headers (the EDF limit is 256 * (ns + 1) bytes with ns < 10000). */
const MAX_HEADER_BYTES = 4 << 20;

export async function checkBidsFolder(source: BidsFolderSource): Promise<BidsCheck> {
  const errors: BidsIssue[] = [];
  const warnings: BidsIssue[] = [];
  const recordings: string[] = [];
  const byPath = new Map(source.files.map((f) => [f.path, f]));

  await checkDescription(source, byPath, errors, warnings);

  const lister = listerOf(source.files);
  for (const file of source.files) {
    const ext = extensionOf(file.path);
    if (!primaryExtensions.includes(ext) && !companionExtensions.includes(ext)) continue;
    const place = dataFolderOf(file.path);
    if (!place) {
      if (primaryExtensions.includes(ext)) {
        warnings.push({ path: file.path, message: 'not in a sub-<label>/[ses-<label>/]<eeg|emg|ieeg>/ folder: it is uploaded but not converted' });
      }
      continue;
    }
    if (!primaryExtensions.includes(ext)) continue;
    const nameProblem = bidsNameProblem(file.path, place);
    if (nameProblem) {
      errors.push({ path: file.path, message: nameProblem });
      continue;
    }
    recordings.push(file.path);
    const sidecars = await applicableFiles(lister, file.path, place.modality, '.json');
    if (sidecars.length === 0) errors.push({ path: file.path, message: `has no ${place.modality} sidecar: BIDS requires a ${stemOf(file.path)}.json (or one at a higher level that applies)` });
    const channels = await applicableFiles(lister, file.path, 'channels', '.tsv');
    if (channels.length === 0) warnings.push({ path: file.path, message: 'has no _channels.tsv: channel types and units come from the data file alone' });
    await checkDataFile(source, byPath, file, errors);
  }
  if (recordings.length === 0 && byPath.has('dataset_description.json')) {
    warnings.push({ path: null, message: 'no EEG, EMG or iEEG recording found (EDF, BDF, BrainVision .vhdr or EEGLAB .set in sub-<label>/[ses-<label>/]<eeg|emg|ieeg>/): nothing will be converted' });
  }
  return { errors, warnings, recordings };
}

/** The check on a folder of the local disk; `files` as listed by the caller (relative `/` paths and sizes). */
export function bidsFolderOnDisk(root: string, files: BidsFolderFile[]): BidsFolderSource {
  let tree: Promise<SourceTree> | undefined;
  return {
    files,
    // Only regular files inside the folder are read, as the conversion will (a link out of it is refused).
    async read(rel, length) {
      tree ??= SourceTree.at(root);
      // Relative to the tree's root: `root` itself may be relative (`./my-study`), and the tree resolves it once.
      const handle = await (await tree).open(path.join(...rel.split('/')));
      try {
        const buffer = Buffer.alloc(length);
        const { bytesRead } = await handle.read(buffer, 0, length, 0);
        return buffer.subarray(0, bytesRead);
      } finally {
        await handle.close();
      }
    },
  };
}

async function checkDescription(source: BidsFolderSource, byPath: Map<string, BidsFolderFile>, errors: BidsIssue[], warnings: BidsIssue[]): Promise<void> {
  const file = byPath.get('dataset_description.json');
  if (!file) {
    errors.push({ path: null, message: 'no dataset_description.json at the top of the folder: is this the root of a BIDS dataset?' });
    return;
  }
  let description: unknown;
  try {
    description = JSON.parse(new TextDecoder().decode(await source.read(file.path, Math.min(file.size, MAX_HEADER_BYTES))));
  } catch (err) {
    errors.push({ path: file.path, message: `is not valid JSON (${(err as Error).message})` });
    return;
  }
  if (typeof description !== 'object' || description === null || Array.isArray(description)) {
    errors.push({ path: file.path, message: 'must hold a JSON object' });
    return;
  }
  const fields = description as Record<string, unknown>;
  for (const required of ['Name', 'BIDSVersion']) {
    if (typeof fields[required] !== 'string' || !(fields[required] as string).trim()) errors.push({ path: file.path, message: `has no ${required} (BIDS requires it)` });
  }
  if (!byPath.has('README') && ![...byPath.keys()].some((p) => /^README\.(md|txt|rst)$/i.test(p))) {
    warnings.push({ path: null, message: 'no README at the top of the folder: BIDS recommends one describing the dataset' });
  }
}

interface DataFolder {
  subject: string;
  session: string | undefined;
  modality: string;
}

/** `sub-X/[ses-Y/]<modality>/<file>`, or undefined when the file is anywhere else. */
function dataFolderOf(filePath: string): DataFolder | undefined {
  const parts = filePath.split('/');
  if (parts.length === 3 && parts[0]!.startsWith('sub-') && modalities.includes(parts[1] as never)) {
    return { subject: parts[0]!.slice(4), session: undefined, modality: parts[1]! };
  }
  if (parts.length === 4 && parts[0]!.startsWith('sub-') && parts[1]!.startsWith('ses-') && modalities.includes(parts[2] as never)) {
    return { subject: parts[0]!.slice(4), session: parts[1]!.slice(4), modality: parts[2]! };
  }
  return undefined;
}

function bidsNameProblem(filePath: string, place: DataFolder): string | undefined {
  const fileName = path.posix.basename(filePath);
  const expected = `sub-${place.subject}${place.session ? `_ses-${place.session}` : ''}_task-<label>[_run-<index>]_${place.modality}${extensionOf(filePath)}`;
  const name = parseBidsName(fileName);
  if (!name || name.entities.size === 0) return `is not a BIDS file name (entities key-value joined by "_", then the suffix), such as ${expected}`;
  if (name.entities.get('sub') !== place.subject || [...name.entities.keys()][0] !== 'sub') return `must start with sub-${place.subject}, the subject of its folder (for example ${expected})`;
  if (place.session !== undefined && name.entities.get('ses') !== place.session) return `must name the session of its folder, ses-${place.session} (for example ${expected})`;
  if (name.suffix !== place.modality) return `must end with _${place.modality}${extensionOf(filePath)} in a ${place.modality}/ folder (for example ${expected})`;
  if (!name.entities.has('task')) return `has no task-<label> entity, which BIDS requires for ${place.modality} data (for example ${expected})`;
  return undefined;
}

async function checkDataFile(source: BidsFolderSource, byPath: Map<string, BidsFolderFile>, file: BidsFolderFile, errors: BidsIssue[]): Promise<void> {
  const ext = extensionOf(file.path);
  const fileName = path.posix.basename(file.path);
  const dir = path.posix.dirname(file.path);
  const sibling = (name: string) => byPath.get(`${dir}/${name}`);
  const stem = fileName.slice(0, fileName.length - ext.length);
  try {
    if (ext === '.edf' || ext === '.bdf') {
      const first = await source.read(file.path, Math.min(file.size, 256));
      let header = first;
      if (file.size >= 256) {
        const ns = Number(new TextDecoder().decode(first.subarray(252, 256)).trim());
        if (Number.isInteger(ns) && ns > 0 && 256 * (ns + 1) <= MAX_HEADER_BYTES) header = await source.read(file.path, Math.min(file.size, 256 * (ns + 1)));
      }
      parseEdfHeader(header, file.size, fileName);
    } else if (ext === '.vhdr') {
      const header = parseBrainVisionHeader(await source.read(file.path, Math.min(file.size, MAX_HEADER_BYTES)), fileName);
      const data = sibling(path.posix.basename(header.dataFile.replaceAll('\\', '/'))) ?? sibling(`${stem}.eeg`);
      if (!data) errors.push({ path: file.path, message: `its data file ${header.dataFile} (DataFile=) is not in the folder` });
      else if (data.size === 0) errors.push({ path: data.path, message: 'is empty (0 bytes): the recording has no samples' });
      const markers = header.markerFile ? (sibling(path.posix.basename(header.markerFile.replaceAll('\\', '/'))) ?? sibling(`${stem}.vmrk`)) : sibling(`${stem}.vmrk`);
      if (!markers) errors.push({ path: file.path, message: `its marker file ${header.markerFile ?? `${stem}.vmrk`} (MarkerFile=) is not in the folder; BrainVision needs the .vhdr, .vmrk and .eeg together` });
    } else if (ext === '.set') {
      if (file.size === 0) errors.push({ path: file.path, message: 'is empty (0 bytes)' });
      const fdt = sibling(`${stem}.fdt`);
      if (fdt && fdt.size === 0) errors.push({ path: fdt.path, message: 'is empty (0 bytes): the recording has no samples' });
      // A .set names its .fdt in plain text when it is not compressed; a compressed one is checked by the conversion.
      if (!fdt && file.size > 0) {
        const text = new TextDecoder('latin1').decode(await source.read(file.path, Math.min(file.size, MAX_HEADER_BYTES)));
        const named = /([\w.-]+\.fdt)/i.exec(text)?.[1];
        if (named && !sibling(named)) errors.push({ path: file.path, message: `its data file ${named} is not in the folder (an EEGLAB .set keeps its samples in a .fdt beside it)` });
      }
    }
  } catch (err) {
    if (isConversionError(err)) errors.push({ path: file.path, message: withoutName(err.message, fileName) });
    else throw err;
  }
}

function withoutName(message: string, fileName: string): string {
  return message.startsWith(`${fileName} `) ? message.slice(fileName.length + 1).replace(/\.$/, '') : message.replace(/\.$/, '');
}

function listerOf(files: BidsFolderFile[]): DirectoryLister {
  const byDir = new Map<string, string[]>();
  for (const f of files) {
    const dir = path.posix.dirname(f.path);
    const key = dir === '.' ? '' : dir;
    byDir.set(key, [...(byDir.get(key) ?? []), path.posix.basename(f.path)]);
  }
  return async (dir) => byDir.get(dir) ?? [];
}

function extensionOf(filePath: string): string {
  const name = path.posix.basename(filePath);
  const dot = name.lastIndexOf('.');
  return dot <= 0 ? '' : name.slice(dot).toLowerCase();
}

function stemOf(filePath: string): string {
  return filePath.slice(0, filePath.length - extensionOf(filePath).length);
}
