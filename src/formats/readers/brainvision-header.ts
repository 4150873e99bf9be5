/** The BrainVision `.vhdr` header (Brain Products Core Data Format 1.0 and 2.0): what is needed to read the data. */
import { ChannelCountMismatchError, CorruptOrTruncatedError, EmptyRecordingError, NotContinuousError, UnsupportedFormatError } from '../conversion-errors.js';
import { iniValue, parseIni } from './ini-file.js';
import { decodeDeclared } from './text-decode.js';
import { snapRate } from './naive-time.js';
import { checkChannelCount, checkSamplingRate } from '../recording-limits.js';

export type BinaryFormat = 'INT_16' | 'INT_32' | 'IEEE_FLOAT_32';

export interface BrainVisionChannel {
  label: string;
  reference: string;
  resolution: number;
  unit: string;
}

export interface BrainVisionHeader {
  version: string;
  codepage: string;
  dataFile: string;
  markerFile: string | undefined;
  vectorized: boolean;
  binaryFormat: BinaryFormat;
  bigEndian: boolean;
  rate: number;
  dataPoints: number | undefined;
  channels: BrainVisionChannel[];
  flags: string[];
}

const binaryFormats = new Set<string>(['INT_16', 'INT_32', 'IEEE_FLOAT_32']);

export function parseBrainVisionHeader(bytes: Uint8Array, fileName: string): BrainVisionHeader {
  if (bytes.length === 0) throw new EmptyRecordingError(`${fileName} is empty (0 bytes).`);
  const decoded = decodeDeclared(bytes);
  const firstLine = decoded.text.replace(/^\uFEFF/, '').split(/\r?\n/, 1)[0]!.trim();
  const version = /^Brain ?Vision Data Exchange Header File,? Version ([\d.]+)/i.exec(firstLine)?.[1];
  if (!version) throw new CorruptOrTruncatedError(`${fileName} is not a BrainVision header: its first line is not "Brain Vision Data Exchange Header File Version ...".`);
  const ini = parseIni(decoded.text);
  const flags: string[] = decoded.recovered ? ['codepage_recovered'] : [];
  const common = (key: string) => iniValue(ini, 'Common Infos', key);

  const dataFormat = (common('DataFormat') ?? 'BINARY').toUpperCase();
  if (dataFormat !== 'BINARY') throw new UnsupportedFormatError(`${fileName} declares ${dataFormat} data; only BINARY BrainVision data is supported.`);
  const dataType = (common('DataType') ?? 'TIMEDOMAIN').toUpperCase();
  if (dataType !== 'TIMEDOMAIN') throw new UnsupportedFormatError(`${fileName} holds ${dataType} data; only time-domain data is supported.`);
  if (common('SegmentationType') && common('SegmentationType')!.toUpperCase() !== 'NOTSEGMENTED') {
    throw new NotContinuousError(`${fileName} is a segmented (epoched) export (SegmentationType=${common('SegmentationType')}); only continuous recordings are supported.`);
  }
  const orientation = (common('DataOrientation') ?? 'MULTIPLEXED').toUpperCase();
  if (orientation !== 'MULTIPLEXED' && orientation !== 'VECTORIZED') {
    throw new CorruptOrTruncatedError(`${fileName} has an unknown DataOrientation "${orientation}".`);
  }
  const binaryFormat = (iniValue(ini, 'Binary Infos', 'BinaryFormat') ?? 'INT_16').toUpperCase();
  if (!binaryFormats.has(binaryFormat)) {
    throw new UnsupportedFormatError(`${fileName} uses BinaryFormat ${binaryFormat}; supported are INT_16, INT_32 and IEEE_FLOAT_32.`);
  }
  const bigEndian = /^(YES|TRUE|1)$/i.test(iniValue(ini, 'Binary Infos', 'UseBigEndianOrder') ?? 'NO');

  const nChannels = Number(common('NumberOfChannels'));
  if (!Number.isInteger(nChannels) || nChannels < 1) {
    throw new CorruptOrTruncatedError(`${fileName} has no valid NumberOfChannels ("${common('NumberOfChannels') ?? ''}").`);
  }
  checkChannelCount(fileName, nChannels);
  const interval = Number(common('SamplingInterval'));
  if (!Number.isFinite(interval) || interval <= 0) {
    throw new CorruptOrTruncatedError(`${fileName} has no valid SamplingInterval ("${common('SamplingInterval') ?? ''}").`);
  }
  checkSamplingRate(fileName, 1e6 / interval, `SamplingInterval=${common('SamplingInterval')} (µs)`);
  const dataPointsText = common('DataPoints');
  const dataPoints = dataPointsText === undefined || dataPointsText === '' ? undefined : Number(dataPointsText);
  if (dataPoints !== undefined && (!Number.isInteger(dataPoints) || dataPoints < 0)) {
    throw new CorruptOrTruncatedError(`${fileName} has an invalid DataPoints value ("${dataPointsText}").`);
  }

  const channelInfos = ini.get('channel infos') ?? new Map<string, string>();
  const channels: BrainVisionChannel[] = [];
  for (let k = 1; k <= nChannels; k++) {
    const line = channelInfos.get(`ch${k}`);
    if (line === undefined) {
      throw new ChannelCountMismatchError(`${fileName} declares ${nChannels} channels but has no line for channel ${k} in [Channel Infos].`);
    }
    const [name = '', reference = '', resolution = '', unit = ''] = line.split(',');
    const value = resolution.trim() === '' ? 1 : Number(resolution);
    if (!Number.isFinite(value)) throw new CorruptOrTruncatedError(`${fileName}: channel ${k} has an invalid resolution "${resolution}".`);
    channels.push({
      label: name.replaceAll('\\1', ','),
      reference: reference.replaceAll('\\1', ','),
      resolution: value,
      // Core Data Format: a missing unit means microvolts.
      unit: unit.trim() === '' ? 'µV' : unit.trim(),
    });
  }
  const extra = [...channelInfos.keys()].filter((key) => /^ch\d+$/.test(key) && Number(key.slice(2)) > nChannels);
  if (extra.length > 0) throw new ChannelCountMismatchError(`${fileName} declares ${nChannels} channels but lists ${nChannels + extra.length} in [Channel Infos].`);

  const dataFile = common('DataFile');
  if (!dataFile) throw new CorruptOrTruncatedError(`${fileName} does not name its data file (DataFile=).`);
  return {
    version,
    codepage: decoded.codepage,
    dataFile,
    markerFile: common('MarkerFile') || undefined,
    vectorized: orientation === 'VECTORIZED',
    binaryFormat: binaryFormat as BinaryFormat,
    bigEndian,
    rate: snapRate(1e6 / interval),
    dataPoints,
    channels,
    flags,
  };
}
