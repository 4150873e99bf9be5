/** A small EEGLAB `.set` (MAT v5, inline single data) that MNE's read_raw_eeglab reads, written with the test MAT writer. */
import { writeMat5, type MatIn } from '../formats/support/mat5-writer.js';

export function eeglabSet(nbchan = 4, pnts = 1000, srate = 250): Uint8Array {
  // MATLAB column order: element (channel c, sample t) at c + t * nbchan.
  const data = Float32Array.from({ length: nbchan * pnts }, (_, i) => Math.fround(Math.sin(i / 37) * 50 + (i % nbchan) * 3.3 + ((i * 7919) % 101) / 17));
  const labels = ['Fz', 'Cz', 'Pz', 'Oz', 'F3', 'F4', 'C3', 'C4'].slice(0, nbchan);
  const set: Record<string, MatIn> = {
    EEG: {
      struct: [{
        setname: 'nds test', nbchan: { double: [nbchan] }, pnts: { double: [pnts] }, trials: { double: [1] }, srate: { double: [srate] },
        xmin: { double: [0] }, xmax: { double: [(pnts - 1) / srate] },
        data: { single: data, dims: [nbchan, pnts] },
        chanlocs: { struct: labels.map((l) => ({ labels: l, type: 'EEG' })) },
        event: { struct: [{ type: 'stim', latency: { double: [3] }, duration: { double: [0] } }] },
      }],
    },
  };
  return writeMat5(set);
}
